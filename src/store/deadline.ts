import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseUnavailableError } from './errors.js';

/**
 * The deadline (epoch ms) of the store call running in this async context. The PostgreSQL
 * connection wrapper reads it, so that every statement of a call shares the call's bound and a
 * call that ran out of time sends nothing more.
 */
const callDeadline = new AsyncLocalStorage<number>();

/** Milliseconds the current call has left; Infinity outside a bounded call (migrations). */
export function timeLeftMs(): number {
  const deadline = callDeadline.getStore();
  return deadline === undefined ? Infinity : deadline - Date.now();
}

export function timedOut(timeoutMs?: number): DatabaseUnavailableError {
  return new DatabaseUnavailableError(timeoutMs === undefined ? 'database call ran out of time' : `database did not answer within ${timeoutMs} ms`);
}

/** Runs `call` with a deadline `timeoutMs` from now; rejects with DatabaseUnavailableError when it passes. */
export function withinDeadline<T>(timeoutMs: number, call: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut(timeoutMs)), timeoutMs);
    callDeadline.run(Date.now() + timeoutMs, call).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
