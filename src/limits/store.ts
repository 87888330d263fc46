import type { LimitName } from './kinds.js';

/** Who a limit belongs to: the caller (static key or JWT subject) or its team/project. */
export type LimitScope = 'key' | 'project';

/**
 * One limit to check and charge for one request, prepared by the plan. Every check of a
 * request lives under the same `{team}` hash tag, so a Redis Cluster can run them in one script.
 * What the limit is (window, unit) is its row in the kinds table: `limitKind(check.limit)`.
 */
export interface Check {
  readonly scope: LimitScope;
  /** How a person reads the scope in a 429 message: `key ci-bot`, `project team-a/prod`. */
  readonly subject: string;
  readonly limit: LimitName;
  readonly max: number;
  /** Units this request takes: 1 request / in-flight slot, or its estimated tokens (may be 0). */
  readonly cost: number;
  /** Length of this request's counting window (what is left of the UTC day for a daily budget); 0 for in-flight limits, which have none. */
  readonly windowMs: number;
  /** Store key (counter or lease set), under `redis.keyPrefix`. */
  readonly key: string;
}

/** What the store saw, per check (same order as the checks). */
export interface Outcome {
  readonly admitted: boolean;
  /** Units in use: after this request's charge when admitted, before it when refused. */
  readonly used: readonly number[];
  /** Milliseconds until the check's window resets (0 for in-flight limits). */
  readonly resetMs: readonly number[];
}

/**
 * Where counters and in-flight leases live. The memory and Redis stores implement the same
 * contract, so the limiter cannot tell which it has.
 */
export interface LimitStore {
  /** `memory` (this instance only) or `redis` (shared): the `store` label of store-error metrics. */
  readonly name: 'memory' | 'redis';
  /**
   * Checks every limit and charges all of them only if all pass — a refused request consumes
   * nothing anywhere. In-flight checks take a lease named `leaseId`.
   * Rejects with StoreUnavailableError when the store cannot answer.
   */
  acquire(checks: readonly Check[], leaseId: string): Promise<Outcome>;
  /**
   * Adds `deltas[i]` to counter i (0 = leave it; `leftMs[i]` is what remains of its window, for
   * a counter that must be created) and releases the leases of `leaseId`.
   */
  settle(checks: readonly Check[], deltas: readonly number[], leftMs: readonly number[], leaseId: string): Promise<void>;
  /** Whether every connection the store needs is up (always true in memory): readiness and /readyz. */
  ready(): boolean;
  /** Resolves true once the store is ready (at once for memory), false after `timeoutMs`: start-up waits on it. */
  whenReady(timeoutMs: number): Promise<boolean>;
  /** Resolves when the store's own background corrections have reached it (undo of late admissions). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The store did not answer (down, timed out, refused the command). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
