import type { UsageQuery, UsageRow } from './usage-aggregate.js';
import type { UsageRecord } from './usage-record.js';

/** Where metered usage is added up and read back by the admin API. */
export interface UsageStore {
  /** Adds a record. Never blocks the response, never throws. */
  record(r: UsageRecord): void;
  /** Rows for the admin API. Throws GatewayError 503 `store_unavailable` when the store cannot be read. */
  query(q: UsageQuery): Promise<UsageRow[]>;
  /** Resolves once everything recorded so far is in the store, or the store is closed (waits through an outage: bound it). */
  flush(): Promise<void>;
  /** One last write attempt, then stops (a connection it was given stays open: its maker closes it). */
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
