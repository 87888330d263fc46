import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { MemoryUsageStore } from './memory-usage-store.js';
import { connectUsageRedis, RedisUsageStore } from './redis-usage-store.js';
import type { UsageQuery, UsageRow } from './usage-query.js';
import type { UsageRecord } from './usage-record.js';

/** A single Redis or a Redis Cluster client (ioredis). */
export type RedisLike = Redis | Cluster;

/** Where metered usage is added up and read back by the admin API. */
export interface UsageStore {
  /** Adds a record. Never blocks the response, never throws. */
  record(r: UsageRecord): void;
  /** Rows for the admin API. Throws GatewayError 503 `store_unavailable` when the store cannot be read. */
  query(q: UsageQuery): Promise<UsageRow[]>;
  /** Resolves once everything recorded so far is in the store, or the store is closed (waits through an outage: bound it). */
  flush(): Promise<void>;
  /** One last write attempt, then releases what the store owns (not a shared client). */
  close(): Promise<void>;
}

export interface UsageStoreEvents {
  /** A write or read against the store failed (feeds `tollgate_store_errors_total{store}`). */
  onStoreError(store: 'redis'): void;
  /** Counts given up for good: the retry buffer was full, or the store closed while Redis was down. */
  onUsageDropped?(lost: UsageRecord): void;
}

export interface UsageStoreOptions {
  /** Distinct day×team×project×model×key cells buffered while Redis is unreachable (default 10000). */
  maxPendingCells?: number;
  /** How long records are coalesced before one write to Redis (default 100 ms). */
  batchDelayMs?: number;
}

/**
 * The redis store when `redis.url` or `redis.cluster` is configured (or a client is passed, to
 * share connections; it must not use ioredis' own `keyPrefix`: keys are prefixed here with
 * `config.redis.keyPrefix`), else the in-memory store.
 */
export function createUsageStore(
  config: Config,
  events: UsageStoreEvents,
  redis?: RedisLike,
  options: UsageStoreOptions = {},
): UsageStore {
  const clustered = config.redis.cluster !== undefined && config.redis.cluster.length > 0;
  if (redis === undefined && !clustered && config.redis.url === '') return new MemoryUsageStore();
  const owned = redis === undefined;
  const client = redis ?? connectUsageRedis(config);
  return new RedisUsageStore(client, owned, config.redis.keyPrefix, events, options);
}
