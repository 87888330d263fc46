import type { Config } from '../config/index.js';
import { errors } from '../errors.js';
import { rateLimitHeaders } from './headers.js';
import { limitKind, type LimitName } from '../limit-kinds/index.js';
import { MemoryStore } from './memory-store.js';
import { BudgetAlerts } from './alerts.js';
import type { EventSink } from '../outbox/index.js';
import { LimitPlan, wholeUnits, type TeamLimitSource } from './plan.js';
import { rejectionFor } from './rejection.js';
import { StoreUnavailableError, type Check, type LimitScope, type LimitStore, type Outcome, type ScopeReading } from './store.js';
import type { Principal, ProjectRef } from '../auth/index.js';

/** What the limiter is built from and reconfigured with: limits, the key prefix of its counters, the price currency of its 429s. */
export type LimiterConfig = Pick<Config, 'rateLimits' | 'redis' | 'metering'> & Partial<Pick<Config, 'notifications'>>;

/** SPEC 24's default thresholds, when the config names none. */
const DEFAULT_THRESHOLDS: readonly number[] = [0.8, 1];

export interface LimitEvents {
  onRejected(scope: LimitScope, limit: LimitName): void;
  /** A call to the shared store failed (`store` is its name, e.g. `redis`). */
  onStoreError(store: string): void;
}

/** What a request reserves before it is forwarded (SPEC 6.3, 14.3): the one shape the pipeline hands the limiter. */
export interface Reserve {
  /** Tokens to reserve (prompt estimate + completion budget); 0 for routes that use none. */
  readonly estimatedTokens: number;
  /** Cost to reserve against budgets, in nano-units of the price currency (0 or absent: none). */
  readonly estimatedCostNanos?: number;
  /**
   * Whether the request can spend tokens or money (a chat completion; absent: it can). Token
   * and cost limits apply only to such requests: a used-up one refuses them whatever they
   * reserve, and lets the others (`/v1/models`, `/v1/preview/*`) through (SPEC 14.3).
   */
  readonly spends?: boolean;
}

export interface AdmissionRequest extends Reserve {
  readonly principal: Principal;
  readonly project: ProjectRef;
}

/** What a finished request really used: tokens, or tokens and cost (nano-units). */
export type Spent = number | { readonly tokens: number; readonly costNanos: number };

export interface Admission {
  /** Header name → value to set on the response (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Settles the reservation to what was used (0 when nothing reached the upstream) and frees
   * the concurrency slot. Idempotent; never throws; never blocks the response.
   */
  finish(spent: Spent): void;
  /** The limits that applied (absent: none did); what a trace shows of the decision. */
  readonly checks?: readonly Pick<Check, 'scope' | 'limit'>[];
}

export interface Limiter {
  /** Resolves when every applicable limit admits the request; rejects with GatewayError 429/503. */
  admit(request: AdmissionRequest): Promise<Admission>;
  /** False while a `closed`-mode store is unreachable (for /readyz). */
  ready(): boolean;
  /** Whether the shared store answers (always true in memory); in `open` mode the fallback serves while it does not. */
  storeConnected(): boolean;
  /**
   * Resolves true once the shared store is connected (at once for memory), false after
   * `timeoutMs`: start-up waits on it so the first requests are not all served by the
   * per-instance fallback.
   */
  whenConnected(timeoutMs: number): Promise<boolean>;
  /** Resolves when every finish() so far has reached its store (shutdown, tests). */
  settled(): Promise<void>;
  /**
   * Takes new limits (a config reload): admissions from now on are planned from `config`;
   * reservations already made settle as they were made. The store stays the same.
   */
  configure(config: LimiterConfig): void;
  /**
   * A team scope's counters as they stand (its limits and its spend, SPEC 16), read from the
   * shared store — or, while it cannot answer in `open` mode, from this instance's fallback.
   */
  readTeam(team: string): Promise<ScopeReading>;
  close(): Promise<void>;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** What a request to which no limit applies gets: no store, no headers, nothing to settle. */
const UNLIMITED: Admission = Object.freeze({ headers: NO_HEADERS, finish: () => undefined });

/** One admitted request's charges, until finish() settles them. */
class Reservation implements Admission {
  private finished = false;

  constructor(
    readonly headers: Readonly<Record<string, string>>,
    private readonly limiter: StoreLimiter,
    readonly store: LimitStore,
    readonly checks: readonly Check[],
    /** When each counter's window ends on the store's clock: a settle adjusts only that window. */
    readonly windowEnds: readonly number[],
    readonly slot: string | undefined,
  ) {}

  finish(spent: Spent): void {
    if (this.finished) return;
    this.finished = true;
    this.limiter.settle(this, spent);
  }
}

class StoreLimiter implements Limiter {
  private plan!: LimitPlan;
  /** Where an `open`-mode limiter goes while the shared store cannot answer; none when the store is memory. */
  private readonly fallback: MemoryStore | undefined;
  private failOpen = true;
  /** What budgets are counted in, for 429 messages. */
  private currency = 'USD';
  /** Budget alerts (SPEC 24); none without an event sink or thresholds, and then nothing is checked. */
  private alerts: BudgetAlerts | undefined;

  constructor(
    config: LimiterConfig,
    private readonly store: LimitStore,
    private readonly events: LimitEvents,
    private readonly teams: TeamLimitSource,
    private readonly sink: EventSink | undefined,
  ) {
    this.configure(config);
    this.fallback = store instanceof MemoryStore ? undefined : new MemoryStore();
  }

  configure(config: LimiterConfig): void {
    this.currency = config.metering.prices.currency;
    const thresholds = config.notifications?.thresholds ?? DEFAULT_THRESHOLDS;
    this.alerts = this.sink && thresholds.length > 0 ? new BudgetAlerts(this.sink, thresholds, this.currency) : undefined;
    this.plan = new LimitPlan(config, config.redis.keyPrefix, this.teams, undefined, this.alerts !== undefined);
    this.failOpen = config.rateLimits.onStoreError === 'open';
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const reserve = { tokens: request.estimatedTokens, costNanos: request.estimatedCostNanos ?? 0, spends: request.spends ?? true };
    const checks = this.plan.checksFor(request.principal, request.project, reserve, Date.now());
    if (checks.length === 0) return UNLIMITED;
    const { store, result } = await this.acquire(checks);
    if (!result.admitted) {
      const rejection = rejectionFor(checks, result, this.currency);
      // Spend counters never refuse: what is reported is always a limit.
      this.events.onRejected(rejection.check.scope, rejection.check.limit as LimitName);
      throw rejection.error;
    }
    if (this.alerts) this.hearAdmission(this.alerts, checks, result);
    const headers = rateLimitHeaders(checks, result.used, result.resetMs);
    return new Reservation(headers, this, store, checks, result.windowEnds, result.slot);
  }

  ready(): boolean {
    return this.failOpen || this.store.ready();
  }

  async readTeam(team: string): Promise<ScopeReading> {
    const key = this.plan.teamKey(team);
    try {
      return await this.store.read(key);
    } catch (err) {
      if (!(err instanceof StoreUnavailableError) || !this.fallback) throw err;
      this.events.onStoreError(this.store.name);
      return this.fallback.read(key);
    }
  }

  storeConnected(): boolean {
    return this.store.ready();
  }

  whenConnected(timeoutMs: number): Promise<boolean> {
    return this.store.whenReady(timeoutMs);
  }

  async settled(): Promise<void> {
    await this.store.settled();
  }

  async close(): Promise<void> {
    await this.settled();
    await this.store.close();
    await this.fallback?.close();
  }

  /**
   * Called once per Reservation: gives back what was not used, charges overruns, frees slots.
   * The store decides against its own clock whether the window is still the one charged.
   */
  settle(reservation: Reservation, spent: Spent): void {
    const tokens = wholeUnits(typeof spent === 'number' ? spent : spent.tokens);
    const costNanos = wholeUnits(typeof spent === 'number' ? 0 : spent.costNanos);
    const { checks } = reservation;
    const deltas = new Array<number>(checks.length);
    let work = false;
    for (let i = 0; i < checks.length; i++) {
      const unit = limitKind(checks[i]!.limit).unit;
      const actual = unit === 'token' ? tokens : unit === 'cost' ? costNanos : undefined;
      deltas[i] = actual === undefined ? 0 : actual - checks[i]!.cost;
      if (deltas[i] !== 0 || unit === 'inflight') work = true;
    }
    if (work) reservation.store.settle(checks, deltas, reservation.windowEnds, reservation.slot, this.alerts?.spent);
  }

  /** An admitted request's charges: each budget's counter went from `used − cost` to `used` (the store's answer, atomic). */
  private hearAdmission(alerts: BudgetAlerts, checks: readonly Check[], result: Outcome): void {
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (check.alerts !== undefined && check.cost > 0 && check.reportOnly !== true) alerts.spent(check, result.used[i]! - check.cost, result.used[i]!, result.windowEnds[i]!);
    }
  }

  /**
   * Asks the shared store; when it cannot answer, `open` falls back to this instance's memory
   * store (limits then hold per instance) and `closed` refuses with 503.
   */
  private async acquire(checks: readonly Check[]): Promise<{ store: LimitStore; result: Outcome }> {
    const { store, fallback } = this;
    try {
      return { store, result: await store.acquire(checks) };
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      this.events.onStoreError(store.name);
      if (!this.failOpen || !fallback) {
        throw errors.storeUnavailable();
      }
      return { store: fallback, result: fallback.acquire(checks) };
    }
  }
}

/**
 * Builds the limiter on the given store (memory, or Redis built by the app from its one
 * connection module). With a shared store and `onStoreError: open`, a memory fallback answers
 * while the store cannot. With `sink`, budget thresholds crossed are published there (SPEC 24).
 */
export function createLimiter(config: LimiterConfig, store: LimitStore, events: LimitEvents, teams: TeamLimitSource = NO_TEAMS, sink?: EventSink): Limiter {
  return new StoreLimiter(config, store, events, teams, sink);
}

const NO_TEAMS: TeamLimitSource = { limitsOf: () => undefined };
