import { RateLimiterMemory } from 'rate-limiter-flexible';
import { limitKind } from './kinds.js';
import type { Check, LimitStore, Outcome } from './store.js';

const isInflight = (check: Check): boolean => limitKind(check.limit).window.type === 'inflight';

/**
 * Limits of one gateway instance: the store when no Redis is configured, and the fallback
 * while Redis is down in `open` mode. Windowed counters are rate-limiter-flexible's
 * RateLimiterMemory (fixed windows that start at a key's first charge, like the Redis store);
 * in-flight counts are plain numbers, since they die with the process anyway.
 *
 * RateLimiterMemory.consume() charges even when it refuses, and one call covers one key. To
 * check every scope first and charge only when all pass, admissions run one at a time (a
 * promise chain: microtasks only, no I/O), so nothing interleaves between the reads and the charges.
 */
export class MemoryStore implements LimitStore {
  readonly name = 'memory';
  /** Limiters by `max`, one map per kind of window: looked up without building a string id. */
  private readonly fixedLimiters = new Map<number, RateLimiterMemory>();
  private readonly calendarLimiters = new Map<number, RateLimiterMemory>();
  private readonly inFlight = new Map<string, number>();
  private tail: Promise<unknown> = Promise.resolve();

  acquire(checks: readonly Check[]): Promise<Outcome> {
    const run = this.tail.then(() => this.checkThenCharge(checks));
    this.tail = run.catch(() => undefined);
    return run;
  }

  async settle(checks: readonly Check[], deltas: readonly number[], leftMs: readonly number[]): Promise<void> {
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (isInflight(check)) {
        const count = (this.inFlight.get(check.key) ?? 1) - 1;
        if (count > 0) this.inFlight.set(check.key, count);
        else this.inFlight.delete(check.key);
        continue;
      }
      const delta = deltas[i]!;
      if (delta === 0) continue;
      const limiter = this.limiterFor(check);
      const window = { customDuration: Math.max(1, leftMs[i]!) / 1000 };
      if (delta > 0) {
        pending.push(limiter.penalty(check.key, delta, window));
        continue;
      }
      // Like the Redis store: a refund never creates a counter (its window is gone) or goes below 0.
      const current = await limiter.get(check.key);
      if (current === null || current.msBeforeNext <= 0) continue;
      pending.push(limiter.reward(check.key, Math.min(-delta, current.consumedPoints), window));
    }
    await Promise.all(pending);
  }

  ready(): boolean {
    return true;
  }

  whenReady(): Promise<boolean> {
    return Promise.resolve(true);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.tail;
  }

  /**
   * Reads every counter, then charges them all only if every check passes. All reads are issued
   * before the first await, and all charges likewise (RateLimiterMemory answers from memory when
   * called): awaiting them one by one then costs less than Promise.all and per-call handlers.
   */
  private async checkThenCharge(checks: readonly Check[]): Promise<Outcome> {
    const used = new Array<number>(checks.length);
    const resetMs = new Array<number>(checks.length);
    const inflight = checks.map(isInflight);
    const windows = checks.map((check, i) => (inflight[i] ? null : this.limiterFor(check).get(check.key)));
    let admitted = true;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const read = windows[i];
      const window = read ? await read : null;
      const live = window !== null && window.msBeforeNext > 0;
      used[i] = inflight[i] ? (this.inFlight.get(check.key) ?? 0) : live ? window.consumedPoints : 0;
      resetMs[i] = inflight[i] ? 0 : live ? window.msBeforeNext : check.windowMs;
      if (check.cost > 0 && used[i]! + check.cost > check.max) admitted = false;
    }
    if (!admitted) return { admitted, used, resetMs };
    // penalty() charges like consume() but never refuses: the admission is already decided.
    const charges = checks.map((check, i) => {
      if (inflight[i]) {
        this.inFlight.set(check.key, (this.inFlight.get(check.key) ?? 0) + 1);
        return null;
      }
      return check.cost === 0 ? null : this.limiterFor(check).penalty(check.key, check.cost, { customDuration: check.windowMs / 1000 });
    });
    for (let i = 0; i < checks.length; i++) {
      const charge = charges[i];
      if (inflight[i]) used[i] = used[i]! + 1;
      else if (charge) {
        const res = await charge;
        used[i] = res.consumedPoints;
        resetMs[i] = res.msBeforeNext;
      }
    }
    return { admitted, used, resetMs };
  }

  /**
   * One RateLimiterMemory per kind of window and limit (bounded by the config's distinct
   * limits). Keys are unique per limit kind, so kinds sharing a window share limiters. Every
   * charge carries its window's duration (for a calendar window, the time left in its day or
   * month), so a limiter's own duration is only its default.
   */
  private limiterFor(check: Check): RateLimiterMemory {
    const window = limitKind(check.limit).window;
    const calendar = window.type === 'utcDay' || window.type === 'utcMonth';
    const byMax = calendar ? this.calendarLimiters : this.fixedLimiters;
    let limiter = byMax.get(check.max);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: check.max, duration: calendar ? 86_400 : check.windowMs / 1000, keyPrefix: '' });
      byMax.set(check.max, limiter);
    }
    return limiter;
  }
}
