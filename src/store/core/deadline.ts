import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseUnavailableError } from './errors.js';

interface CallBound {
  /** Epoch ms by which the call must be answered. */
  readonly deadline: number;
  readonly timeoutMs: number;
}

/**
 * The bound of the store call running in this async context. The PostgreSQL connection
 * wrapper reads it, so that every statement of a call shares the call's bound and a call that
 * ran out of time sends nothing more.
 */
const currentCall = new AsyncLocalStorage<CallBound>();

export function timedOut(timeoutMs: number): DatabaseUnavailableError {
  return new DatabaseUnavailableError(`database did not answer within ${timeoutMs} ms`);
}

/** Milliseconds the current call has left, and its error once none are; unbounded outside a call (migrations). */
export function timeLeft(): { ms: number; error: () => DatabaseUnavailableError } {
  const call = currentCall.getStore();
  if (!call) return { ms: Infinity, error: () => timedOut(Infinity) };
  return { ms: call.deadline - Date.now(), error: () => timedOut(call.timeoutMs) };
}

/** Runs `call` with a deadline `timeoutMs` from now; rejects with DatabaseUnavailableError when it passes. */
export function withinDeadline<T>(timeoutMs: number, call: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut(timeoutMs)), timeoutMs);
    currentCall.run({ deadline: Date.now() + timeoutMs, timeoutMs }, call).then(
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
