import { GatewayError } from '../errors.js';
import type { RedisConnection } from '../redis/index.js';
import { aggregateUsage, daysInRange, matchesQuery, type UsageQuery, type UsageRow } from './usage-aggregate.js';
import { addCounts, addToCells, type UsageRecord } from './usage-record.js';
import { parseJsonOrUndefined } from './usage.js';
import type { UsageStore, UsageStoreEvents, UsageStoreOptions } from './usage-store.js';

/*
 * Key layout. Every key of one UTC day carries the hash tag {YYYY-MM-DD}, so a day's writes are
 * one single-slot MULTI that Redis Cluster accepts, and all instances HINCRBY the same fields:
 *
 *   <prefix>usage:{<day>}:projects            SET   "<team>/<project>" pairs with usage that day
 *   <prefix>usage:{<day>}:<team>/<project>    HASH  field "<counter> <JSON [model, keyId]>" → count
 *     counter: requests | prompt_tokens | completion_tokens | total_tokens (absent = 0)
 *   e.g. tollgate:usage:{2025-06-01}:team-a/prod
 *          requests ["wandb-artifact:///acme/rl/agent:step3","ci-bot"] → 12
 *
 * The admin query walks the days of its range (at most 366): SMEMBERS of each day's set, then
 * HGETALL of the pairs its filters keep — never a SCAN of the keyspace. Team and project names
 * cannot contain "/" (SPEC 6.2) and model/key are JSON-encoded, so every part reads back
 * unambiguously. No TTL: usage is billing data. Trade-off: a day's usage sits on one slot;
 * writes are coalesced (one MULTI per day per batch), so that node sees little load.
 */

const COUNTERS = ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens'] as const;
type Counter = (typeof COUNTERS)[number];
const COUNTER_NAMES: ReadonlySet<string> = new Set(COUNTERS);
/** How long close() and query() wait for a first connection. */
const USAGE_COMMAND_TIMEOUT_MS = 2_000;
const MAX_RETRY_DELAY_MS = 2_000;
/** Client states before the first connection is up: commands would fail only because it is early. */
const CONNECTING: ReadonlySet<string> = new Set(['wait', 'connecting', 'connect']);

const fieldsToCells = (day: string, team: string, project: string, fields: Record<string, string>): UsageRecord[] => {
  const cells = new Map<string, UsageRecord>();
  for (const [field, value] of Object.entries(fields)) {
    const space = field.indexOf(' ');
    const counter = field.slice(0, space);
    if (!COUNTER_NAMES.has(counter)) continue;
    const id = field.slice(space + 1);
    let cell = cells.get(id);
    if (cell === undefined) {
      const parts = parseJsonOrUndefined(id);
      if (!Array.isArray(parts) || typeof parts[0] !== 'string' || typeof parts[1] !== 'string') continue;
      cell = { day, team, project, model: parts[0], keyId: parts[1], requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      cells.set(id, cell);
    }
    cell[counter as Counter] += Number(value);
  }
  return [...cells.values()];
};

/**
 * Usage in Redis. record() only adds into an in-memory batch; a timer writes the batch a moment
 * later, so the response never waits on Redis. A failed write goes back into the batch and is
 * retried (on reconnect, or with backoff); the batch is bounded and drops its oldest cell when full.
 * Delivery is at-least-once: only a MULTI whose reply is lost after it ran can be counted twice.
 */
export class RedisUsageStore implements UsageStore {
  private pending = new Map<string, UsageRecord>();
  private writing: Promise<void> | null = null;
  private batchTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;
  private attemptWaiters: Array<() => void> = [];
  private readonly maxPending: number;
  private readonly batchDelayMs: number;
  private readonly onReady = (): void => {
    if (this.pending.size > 0) this.writeNow();
  };

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly events: UsageStoreEvents,
    options: UsageStoreOptions,
  ) {
    this.maxPending = options.maxPendingCells ?? 10_000;
    this.batchDelayMs = options.batchDelayMs ?? 100;
    redis.on('ready', this.onReady);
  }

  record(r: UsageRecord): void {
    try {
      if (this.closed) {
        this.events.onUsageDropped?.(r);
        return;
      }
      if (addToCells(this.pending, r)) this.dropOverflow();
      if (this.writing === null && this.batchTimer === null && this.retryTimer === null) {
        this.batchTimer = setTimeout(() => this.writeNow(), this.batchDelayMs).unref();
      }
    } catch {
      // Metering must never break the response it meters.
    }
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    await this.connected();
    // Read-your-writes for this instance: one write attempt of what is still batched.
    if (this.pending.size > 0) this.writeNow();
    if (this.writing !== null) await this.writing;
    try {
      return aggregateUsage(await this.readCells(q), q.groupBy);
    } catch {
      this.events.onStoreError('redis');
      throw new GatewayError(503, 'store_unavailable', 'The usage store (Redis) cannot be read right now; try again shortly.');
    }
  }

  async flush(): Promise<void> {
    // Once closed, close() owns the last attempt; looping on would retry with no timer between.
    while (!this.closed && (this.pending.size > 0 || this.writing !== null)) {
      const attempted = new Promise<void>((resolve) => this.attemptWaiters.push(resolve));
      // While a retry is scheduled, wait for it (or for the reconnect that triggers it).
      if (this.writing === null && this.retryTimer === null) this.writeNow();
      await attempted;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.redis.off('ready', this.onReady);
    await this.connected();
    if (this.pending.size > 0) this.writeNow();
    if (this.writing !== null) await this.writing;
    this.clearTimers();
    for (const cell of this.pending.values()) this.events.onUsageDropped?.(cell);
    this.pending.clear();
    this.wakeFlushers();
  }

  private clearTimers(): void {
    if (this.batchTimer !== null) clearTimeout(this.batchTimer);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.batchTimer = null;
    this.retryTimer = null;
  }

  /** Lets every flush() waiting on a write attempt look again. */
  private wakeFlushers(): void {
    const waiters = this.attemptWaiters;
    this.attemptWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits (bounded) while the client makes its first connection; at once otherwise. */
  private connected(): Promise<void> {
    if (!CONNECTING.has(this.redis.status)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.redis.off('ready', done).off('error', done);
        resolve();
      };
      const timer = setTimeout(done, USAGE_COMMAND_TIMEOUT_MS);
      this.redis.once('ready', done).once('error', done);
    });
  }

  /** Starts writing everything batched, unless a write is already running. */
  private writeNow(): void {
    if (this.writing !== null) return;
    this.clearTimers();
    if (CONNECTING.has(this.redis.status)) {
      // Not a failure: 'ready' starts the write; the timer only matters if connecting fails.
      this.retryTimer = setTimeout(() => this.writeNow(), MAX_RETRY_DELAY_MS).unref();
      return;
    }
    this.writing = this.writePending().then((ok) => {
      this.writing = null;
      this.failures = ok ? 0 : this.failures + 1;
      this.wakeFlushers();
      if (this.pending.size === 0 || this.closed) return;
      const delay = ok ? this.batchDelayMs : Math.min(50 * 2 ** this.failures, MAX_RETRY_DELAY_MS);
      const timer = setTimeout(() => this.writeNow(), delay).unref();
      if (ok) this.batchTimer = timer;
      else this.retryTimer = timer;
    });
  }

  /** Writes the batch, one MULTI per day; answers false (and re-batches) when any day failed. */
  private async writePending(): Promise<boolean> {
    const batch = this.pending;
    this.pending = new Map();
    const byDay = new Map<string, Array<[string, UsageRecord]>>();
    for (const entry of batch) {
      const day = entry[1].day;
      const entries = byDay.get(day);
      if (entries === undefined) byDay.set(day, [entry]);
      else entries.push(entry);
    }
    const failed = new Map<string, UsageRecord>();
    await Promise.all(
      [...byDay].map(async ([day, entries]) => {
        try {
          await this.writeDay(day, entries);
        } catch {
          for (const [key, cell] of entries) failed.set(key, cell);
        }
      }),
    );
    if (failed.size === 0) return true;
    this.events.onStoreError('redis');
    this.rebatch(failed);
    return false;
  }

  private async writeDay(day: string, entries: Array<[string, UsageRecord]>): Promise<void> {
    const tag = `${this.prefix}usage:{${day}}`;
    const pairs = new Set<string>();
    const multi = this.redis.multi();
    for (const [, cell] of entries) {
      const pair = `${cell.team}/${cell.project}`;
      const id = JSON.stringify([cell.model, cell.keyId]);
      pairs.add(pair);
      for (const counter of COUNTERS) {
        if (cell[counter] > 0 || counter === 'requests') multi.hincrby(`${tag}:${pair}`, `${counter} ${id}`, cell[counter]);
      }
    }
    multi.sadd(`${tag}:projects`, ...pairs);
    const replies = await multi.exec();
    if (replies === null) throw new Error('usage transaction was discarded');
    // The transaction ran: a failed command inside it (e.g. WRONGTYPE) is reported, not retried.
    if (replies.some(([err]) => err !== null)) this.events.onStoreError('redis');
  }

  /** Puts failed cells back ahead of newer ones, so overflow drops the oldest counts first. */
  private rebatch(failed: Map<string, UsageRecord>): void {
    for (const [key, cell] of this.pending) {
      const older = failed.get(key);
      if (older === undefined) failed.set(key, cell);
      else addCounts(older, cell);
    }
    this.pending = failed;
    this.dropOverflow();
  }

  private dropOverflow(): void {
    while (this.pending.size > this.maxPending) {
      const oldest = this.pending.entries().next().value;
      if (oldest === undefined) return;
      this.pending.delete(oldest[0]);
      this.events.onUsageDropped?.(oldest[1]);
    }
  }

  private async readCells(q: UsageQuery): Promise<UsageRecord[]> {
    const days = daysInRange(q.from, q.to);
    const members = await Promise.all(days.map((day) => this.redis.smembers(`${this.prefix}usage:{${day}}:projects`)));
    const reads: Array<Promise<UsageRecord[]>> = [];
    days.forEach((day, i) => {
      for (const pair of members[i] ?? []) {
        const slash = pair.indexOf('/');
        const team = pair.slice(0, slash);
        const project = pair.slice(slash + 1);
        if (!matchesQuery(q, team, project)) continue;
        const hash = `${this.prefix}usage:{${day}}:${pair}`;
        reads.push(this.redis.hgetall(hash).then((fields) => fieldsToCells(day, team, project, fields)));
      }
    });
    return (await Promise.all(reads)).flat();
  }
}
