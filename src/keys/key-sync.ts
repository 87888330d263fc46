import { StoreMirror, type StoreHandle } from '../store/index.js';
import type { RuntimeKeys } from '../auth/index.js';

export interface KeySyncOptions {
  /** Full reload period: the fallback should a change notification be missed. */
  readonly refreshIntervalMs: number;
  /** A load failed: the keys this instance holds stay as they were. */
  readonly onError: (err: unknown) => void;
  /** A key was loaded as the store now has it (one after a change; undefined after a full load): the expiry notices look. */
  readonly onLoaded?: (id: string | undefined) => void;
}

/** This instance's RuntimeKeys kept in step with the durable store (see StoreMirror). */
export type KeySync = StoreMirror;

export function startKeySync(handle: StoreHandle, keys: RuntimeKeys, options: KeySyncOptions): KeySync {
  return new StoreMirror(handle, {
    refreshIntervalMs: options.refreshIntervalMs,
    onError: options.onError,
    loadAll: async (store) => {
      keys.replaceAll(await store.loadKeys());
      options.onLoaded?.(undefined);
    },
    loadOne: async (store, id) => {
      keys.apply(id, await store.loadKey(id));
      options.onLoaded?.(id);
    },
    idOf: (change) => (change.kind === 'key' ? change.id : undefined),
  });
}
