import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

export interface Loaded<T> {
  readonly data: T | null;
  readonly error: ApiError | null;
  readonly loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change (and on reload()); keeps the last answer while the next one loads. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (err: unknown) => current && setState((previous) => ({ data: previous.data, error: err instanceof ApiError ? err : new ApiError(0, 'client_error', String(err), null), loading: false })),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}
