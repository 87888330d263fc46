import { limitKind, type CounterName } from '../limit-kinds/index.js';

/** Who a limit belongs to: the caller (static key or JWT subject), its team/project, or its whole team (SPEC 16). */
export type LimitScope = 'key' | 'project' | 'team';

/**
 * One limit to check and charge for one request, prepared by the plan. A scope's limits all
 * live in one record of the store (`key`: one Redis hash per scope), one field per limit;
 * every key of a request shares the `{team}` hash tag (one Cluster slot).
 * What the limit is (window, unit) is its row in the kinds table: `limitKind(check.limit)`.
 */
export interface Check {
  readonly scope: LimitScope;
  /** How a person reads the scope in a 429 message: `key ci-bot`, `project team-a/prod`. */
  readonly subject: string;
  readonly limit: CounterName;
  readonly max: number;
  /**
   * Units this request takes: 1 request / in-flight slot, or its estimated tokens or cost (may
   * be 0: it is charged nothing, but still refused by a limit that is used up).
   */
  readonly cost: number;
  /**
   * Length of the window a first charge opens (what is left of the UTC day or month for a
   * calendar window); 0 for in-flight limits, which have none.
   */
  readonly windowMs: number;
  /** The scope's record in the store (a Redis hash), under `redis.keyPrefix`. */
  readonly key: string;
  /**
   * Read for the headers only, never refusing: a token or cost limit on a request that can
   * spend neither (`/v1/models`, `/v1/preview/*`). Budgets stop spending, not traffic.
   */
  readonly reportOnly?: true;
  /** A budget of a `soft` scope: charged, alerting, never refusing (SPEC 24). */
  readonly soft?: true;
  /** Who the budget's alerts name; present only on budgets, and only while alerts are on (an event sink). */
  readonly alerts?: AlertScope;
}

/** Whom a budget alert names (SPEC 24): the scope's ids, never a secret. Built once per scope. */
export interface AlertScope {
  readonly type: LimitScope;
  readonly team: string;
  readonly project?: string;
  /** The key's id (a key scope of a key principal). */
  readonly key?: string;
  /** The JWT subject (a key scope of a JWT principal). */
  readonly subject?: string;
}

/**
 * Spend on a budget's counter moved from `before` to `after` in the window ending at `windowEnd`
 * (store clock): how a store reports a settle's overrun, where actual cost lands, to the alerts.
 */
export type SpendWatch = (check: Check, before: number, after: number, windowEnd: number) => void;

/** An in-flight (concurrency) check: a slot held until the request finishes, not a counter in a window. */
export const isInflight = (check: Check): boolean => limitKind(check.limit).window.type === 'inflight';

/**
 * Whether a check refuses its request, with `used` units already in use: the request needs more
 * than remains, or nothing remains (SPEC 14.3) — a used-up limit refuses every request it
 * applies to, even one that reserves 0 (empty messages with the prompt in `tools`,
 * `max_completion_tokens: 0`, an unpriced model). Both stores decide by this rule; the Redis
 * script (redis-scripts.ts) spells it out in Lua.
 */
export function refuses(check: Check, used: number): boolean {
  return check.reportOnly !== true && check.soft !== true && (used >= check.max || used + check.cost > check.max);
}

/** What the store saw, per check (same order as the checks). */
export interface Outcome {
  readonly admitted: boolean;
  /** Units in use: after this request's charge when admitted, before it when refused. */
  readonly used: readonly number[];
  /** Milliseconds until the check's window resets (0 for in-flight limits). */
  readonly resetMs: readonly number[];
  /**
   * When each counter's window ends, on the store's clock (epoch ms; 0 for in-flight limits
   * and for a window not opened yet): a settle names it, so an adjustment lands only in the
   * window the request was charged in.
   */
  readonly windowEnds: readonly number[];
  /** The in-flight slot an admitted request holds, named as the store knows it (the Redis lease); settle() frees it. */
  readonly slot?: string;
}

/**
 * Where counters and in-flight slots live. The memory and Redis stores implement the same
 * contract, so the limiter cannot tell which it has.
 */
export interface LimitStore {
  /** `memory` (this instance only) or `redis` (shared): the `store` label of store-error metrics. */
  readonly name: 'memory' | 'redis';
  /**
   * Checks every limit and charges all of them only if all pass — a refused request consumes
   * nothing anywhere. An in-flight check takes a slot. The memory store answers at once.
   * Rejects (or throws) StoreUnavailableError when the store cannot answer.
   */
  acquire(checks: readonly Check[]): Outcome | Promise<Outcome>;
  /**
   * Adds `deltas[i]` to counter i in the window that ends at `windowEnds[i]` (from the
   * admission's outcome; a refund to a window that has ended is dropped, an overrun charged to
   * a counter that is gone recreates it until then) and frees the request's in-flight slots.
   * Never throws: a shared store may send it with a later call (`settled()` waits for it).
   * `watch` hears each increase of a counter whose check has `alerts`, as it lands in the store.
   */
  settle(checks: readonly Check[], deltas: readonly number[], windowEnds: readonly number[], slot: string | undefined, watch?: SpendWatch): void;
  /** Whether every connection the store needs is up (always true in memory): readiness and /readyz. */
  ready(): boolean;
  /** Resolves true once the store is ready (at once for memory), false after `timeoutMs`: start-up waits on it. */
  whenReady(timeoutMs: number): Promise<boolean>;
  /** Resolves when every settle so far, and the store's own corrections, have reached the store. */
  settled(): Promise<void>;
  /** One scope's counters as they stand (live windows only), for reading a team's spend; never charges. */
  read(key: string): Promise<ScopeReading>;
  close(): Promise<void>;
}

/** What a scope's record holds now: requests in flight, and each counter in a live window. */
export interface ScopeReading {
  readonly inflight: number;
  readonly counters: Partial<Record<CounterName, { readonly used: number; readonly end: number }>>;
}

/** The store did not answer (down, timed out, refused the command). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
