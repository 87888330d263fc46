import { isInflight, refuses, type Check, type LimitStore, type Outcome, type ScopeReading, type SpendWatch } from './store.js';

/** A windowed counter: units used, and when its window ends (epoch ms). */
interface Counter {
  used: number;
  end: number;
}

/** One scope's limits, as the Redis store keeps them in one hash: counters by limit, and slots in use. */
interface ScopeState {
  readonly counters: Map<string, Counter>;
  inflight: number;
}

/** How often ended windows and idle scopes are dropped, so memory follows the live scopes. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Limits of one gateway instance: the store when no Redis is configured, and the fallback
 * while Redis is down in `open` mode. The same rules as the Redis store's script — fixed
 * windows that start at a counter's first charge, check every scope and charge only if all
 * pass, refunds only into the window they were charged in — on plain maps, answered
 * synchronously: one admission cannot interleave with another, and no promise is made per check.
 */
export class MemoryStore implements LimitStore {
  readonly name = 'memory';
  private readonly scopes = new Map<string, ScopeState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  acquire(checks: readonly Check[]): Outcome {
    const now = Date.now();
    const count = checks.length;
    const used = new Array<number>(count);
    const resetMs = new Array<number>(count);
    const windowEnds = new Array<number>(count);
    let admitted = true;
    for (let i = 0; i < count; i++) {
      const check = checks[i]!;
      const scope = this.scopes.get(check.key);
      if (isInflight(check)) {
        used[i] = scope?.inflight ?? 0;
        resetMs[i] = 0;
        windowEnds[i] = 0;
      } else {
        // A counter not in a window yet reports the window its first charge would open.
        const counter = scope?.counters.get(check.limit);
        const live = counter !== undefined && counter.end > now;
        used[i] = live ? counter.used : 0;
        windowEnds[i] = live ? counter.end : now + check.windowMs;
        resetMs[i] = windowEnds[i]! - now;
      }
      if (refuses(check, used[i]!)) admitted = false;
    }
    if (!admitted) return { admitted, used, resetMs, windowEnds };
    for (let i = 0; i < count; i++) {
      const check = checks[i]!;
      if (check.cost === 0) continue;
      const scope = this.scopeOf(check.key);
      used[i] = used[i]! + check.cost;
      if (isInflight(check)) {
        scope.inflight += 1;
        continue;
      }
      const counter = scope.counters.get(check.limit);
      if (counter !== undefined && counter.end === windowEnds[i]) counter.used = used[i]!;
      else scope.counters.set(check.limit, { used: used[i]!, end: windowEnds[i]! });
    }
    return { admitted, used, resetMs, windowEnds };
  }

  settle(checks: readonly Check[], deltas: readonly number[], windowEnds: readonly number[], _slot?: string, watch?: SpendWatch): void {
    const now = Date.now();
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const scope = this.scopes.get(check.key);
      if (isInflight(check)) {
        if (scope && scope.inflight > 0) scope.inflight -= 1;
        continue;
      }
      const delta = deltas[i]!;
      const end = windowEnds[i]!;
      if (delta === 0 || end <= now) continue;
      const counter = scope?.counters.get(check.limit);
      const live = counter !== undefined && counter.end > now;
      const before = live ? counter.used : 0;
      if (live && counter.end === end) counter.used = Math.max(0, counter.used + delta);
      else if (delta > 0 && live) counter.used += delta;
      // An overrun whose counter is gone is charged until the request's window ends.
      else if (delta > 0) this.scopeOf(check.key).counters.set(check.limit, { used: delta, end });
      // A refund to another window is dropped: it would grant quota never reserved there.
      else continue;
      if (delta > 0 && watch !== undefined && check.alerts !== undefined) watch(check, before, before + delta, live ? counter.end : end);
    }
  }

  ready(): boolean {
    return true;
  }

  /** Scopes held: those with a live counter or a taken slot, until the next sweep (the memory bound's test reads it). */
  get scopeCount(): number {
    return this.scopes.size;
  }

  read(key: string): Promise<ScopeReading> {
    const now = Date.now();
    const scope = this.scopes.get(key);
    const counters: Record<string, { used: number; end: number }> = {};
    for (const [limit, counter] of scope?.counters ?? []) if (counter.end > now) counters[limit] = { used: counter.used, end: counter.end };
    return Promise.resolve({ inflight: scope?.inflight ?? 0, counters: counters as ScopeReading['counters'] });
  }

  whenReady(): Promise<boolean> {
    return Promise.resolve(true);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private scopeOf(key: string): ScopeState {
    let scope = this.scopes.get(key);
    if (!scope) {
      scope = { counters: new Map(), inflight: 0 };
      this.scopes.set(key, scope);
    }
    return scope;
  }

  private sweep(now: number): void {
    for (const [key, scope] of this.scopes) {
      for (const [limit, counter] of scope.counters) if (counter.end <= now) scope.counters.delete(limit);
      if (scope.counters.size === 0 && scope.inflight === 0) this.scopes.delete(key);
    }
  }
}
