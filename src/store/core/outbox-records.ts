/**
 * The outbox's records (SPEC 24): deliveries of events and export batches, and the positions
 * and leases around them. Plain data; the OutboxStore that reads and writes them is in durable-store.ts.
 */

/** A delivery's state (SPEC 24): `failed` is retried after its backoff; `dead` is not retried again unless asked. */
export type OutboxState = 'pending' | 'delivered' | 'failed' | 'dead';

/** A new delivery: one event (or one export batch) for one sink; `id` is stable, so a second insert is skipped. */
export interface OutboxInsert {
  id: string;
  sink: string;
  eventId: string;
  type: string;
  team: string | null;
  payload: unknown;
  createdAt: string;
}

/** A stored delivery: what was inserted, and where its attempts stand. */
export interface OutboxDelivery extends OutboxInsert {
  state: OutboxState;
  attempts: number;
  nextAt: string;
  updatedAt: string;
  lastStatus: number | null;
  lastError: string | null;
}

/** What an attempt (or an admin retry) leaves on a delivery. */
export interface OutboxResult {
  state: OutboxState;
  attempts: number;
  nextAt: string;
  at: string;
  status: number | null;
  error: string | null;
}

export interface OutboxFilter {
  state?: OutboxState;
  sink?: string;
  type?: string;
  team?: string;
  limit: number;
}

/** Finished deliveries retention keeps longer: those of `types`, deleted only when last changed before `before`. */
export interface FinishedKept {
  readonly types: readonly string[];
  readonly before: string;
}

/** Where an export sink has read the ledger to: the (at, id) of the last row it delivered. */
export interface LedgerMark {
  at: string;
  id: string;
}

/** A lease an outbox write holds to: its name and the owner that must still hold it. */
export interface LeaseFence {
  lease: string;
  owner: string;
}
