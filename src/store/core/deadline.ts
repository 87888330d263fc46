import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseUnavailableError } from './errors.js';

interface CallBound {
  /** Epoch ms by which the call must be answered. */
  readonly deadline: number;
  readonly timeoutMs: number;
  /**
   * Set when the call's timer fired: libuv measures timers from its cached loop time, so the
   * timer can fire while Date.now() still reads a millisecond before the deadline; the timer's
   * word is the one the caller was answered with, so it is the one the late statements get.
   */
  expired: boolean;
}

/**
 * The bound of the store call running in this async context. The PostgreSQL connection
 * wrapper reads it, so that every statement of a call shares the call's bound and a call that
 * ran out of time sends nothing more.
 */
const currentCall = new AsyncLocalStorage<CallBound>();

/**
 * Store calls whose work has not settled yet. While an AsyncLocalStorage is enabled, Node 20
 * runs a hook for every promise the process makes (measured: 240 instead of 90 ns per awaited
 * promise, 2.7% of a gateway's CPU under load, though store calls are rare: a ledger batch every
 * 50 ms): it is disabled whenever no call is running, and run() enables it again.
 */
let callsRunning = 0;

function callSettled(): void {
  callsRunning -= 1;
  if (callsRunning === 0) currentCall.disable();
}

export function timedOut(timeoutMs: number): DatabaseUnavailableError {
  return new DatabaseUnavailableError(`database did not answer within ${timeoutMs} ms`);
}

/** Milliseconds the current call has left, and its error once none are; unbounded outside a call (migrations). */
export function timeLeft(): { ms: number; error: () => DatabaseUnavailableError } {
  const call = currentCall.getStore();
  if (!call) return { ms: Infinity, error: () => timedOut(Infinity) };
  return { ms: call.expired ? Math.min(0, call.deadline - Date.now()) : call.deadline - Date.now(), error: () => timedOut(call.timeoutMs) };
}

/** Runs `call` with a deadline `timeoutMs` from now; rejects with DatabaseUnavailableError when it passes. */
export function withinDeadline<T>(timeoutMs: number, call: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const bound: CallBound = { deadline: Date.now() + timeoutMs, timeoutMs, expired: false };
    const timer = setTimeout(() => {
      bound.expired = true;
      reject(timedOut(timeoutMs));
    }, timeoutMs);
    callsRunning += 1;
    let work: Promise<T>;
    try {
      work = currentCall.run(bound, call);
    } catch (error) {
      // A call that throws before it returns a promise has settled already.
      callSettled();
      clearTimeout(timer);
      reject(error);
      return;
    }
    // Counted until the work itself settles, not the deadline: statements of a call that ran out
    // of time must still find its bound (and refuse to run).
    work.then(
      (value) => {
        callSettled();
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        callSettled();
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
