import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { FinishedKept, LeaseFence, OutboxDelivery, OutboxFilter, OutboxInsert, OutboxResult, OutboxState } from '../core/durable-store.js';
import { isoInstant, toNumber } from '../core/rows.js';
import type { Database, OutboxTable } from '../core/schema.js';

/** Rows per INSERT: 13 parameters each stays far below SQLite's and PostgreSQL's parameter limits. */
const INSERT_CHUNK = 500;

/** Inserts deliveries; a row whose id is there already (the same event published again) is skipped. Answers how many were new. */
export async function insertDeliveries(db: Kysely<Database>, rows: readonly OutboxInsert[]): Promise<number> {
  let inserted = 0;
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const result = await db
      .insertInto('outbox')
      .values(rows.slice(start, start + INSERT_CHUNK).map(deliveryInsert))
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return inserted;
}

function deliveryInsert(row: OutboxInsert): Insertable<OutboxTable> {
  return {
    id: row.id,
    sink: row.sink,
    event_id: row.eventId,
    type: row.type,
    team: row.team,
    payload: JSON.stringify(row.payload),
    state: 'pending',
    attempts: 0,
    next_at: row.createdAt,
    created_at: row.createdAt,
    updated_at: row.createdAt,
    last_status: null,
    last_error: null,
  };
}

/** Takes or renews the lease `name` for `owner` until `until`, unless another owner holds it past `now`. */
export async function takeLease(db: Kysely<Database>, name: string, owner: string, now: string, until: string): Promise<boolean> {
  await db
    .insertInto('outbox_lease')
    .values({ name, owner, expires_at: until })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ owner, expires_at: until })
        .where((eb) => eb.or([eb('outbox_lease.owner', '=', owner), eb('outbox_lease.expires_at', '<', now)])),
    )
    .execute();
  const row = await db.selectFrom('outbox_lease').select('owner').where('name', '=', name).executeTakeFirst();
  return row?.owner === owner;
}

/**
 * Whether `fence.owner` holds the lease, locking its row until the transaction ends (PostgreSQL;
 * SQLite's write transaction holds the file) so a takeover waits for the write it fences.
 */
export async function holdsLease(db: Kysely<Database>, dialect: 'postgres' | 'sqlite', fence: LeaseFence): Promise<boolean> {
  const row = await db
    .selectFrom('outbox_lease')
    .select('owner')
    .where('name', '=', fence.lease)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  return row?.owner === fence.owner;
}

export async function releaseLease(db: Kysely<Database>, name: string, owner: string): Promise<void> {
  await db.deleteFrom('outbox_lease').where('name', '=', name).where('owner', '=', owner).execute();
}

/** Pending or failed deliveries due by `now`, oldest first. */
export async function selectDue(db: Kysely<Database>, now: string, limit: number): Promise<OutboxDelivery[]> {
  const rows = await db.selectFrom('outbox').selectAll().where('state', 'in', ['pending', 'failed']).where('next_at', '<=', now).orderBy('next_at').orderBy('id').limit(limit).execute();
  return rows.map(deliveryFrom);
}

export async function updateResult(db: Kysely<Database>, id: string, result: OutboxResult): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ state: result.state, attempts: result.attempts, next_at: result.nextAt, updated_at: result.at, last_status: result.status, last_error: result.error })
    .where('id', '=', id)
    .execute();
}

export async function selectDeliveries(db: Kysely<Database>, filter: OutboxFilter): Promise<OutboxDelivery[]> {
  const rows = await db
    .selectFrom('outbox')
    .selectAll()
    .$if(filter.state !== undefined, (q) => q.where('state', '=', filter.state!))
    .$if(filter.sink !== undefined, (q) => q.where('sink', '=', filter.sink!))
    .$if(filter.type !== undefined, (q) => q.where('type', '=', filter.type!))
    .$if(filter.team !== undefined, (q) => q.where('team', '=', filter.team!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .execute();
  return rows.map(deliveryFrom);
}

export async function selectDelivery(db: Kysely<Database>, id: string): Promise<OutboxDelivery | undefined> {
  const row = await db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? deliveryFrom(row) : undefined;
}

/** Retention: deletes delivered and dead deliveries last touched before `before` — those of `kept.types` only before `kept.before`; answers how many. */
export async function deleteFinished(db: Kysely<Database>, before: string, kept: FinishedKept): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('state', 'in', ['delivered', 'dead'])
    .where('updated_at', '<', before)
    .where((eb) => eb.or([eb('type', 'not in', kept.types), eb('updated_at', '<', kept.before)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Pending (not yet delivered, not dead) deliveries per sink. */
export async function countPending(db: Kysely<Database>): Promise<Map<string, number>> {
  const rows = await db.selectFrom('outbox').select(['sink', sql<number | string>`count(*)`.as('n')]).where('state', 'in', ['pending', 'failed']).groupBy('sink').execute();
  return new Map(rows.map((row) => [row.sink, toNumber(row.n)]));
}

function deliveryFrom(row: Selectable<OutboxTable>): OutboxDelivery {
  return {
    id: row.id,
    sink: row.sink,
    eventId: row.event_id,
    type: row.type,
    team: row.team,
    payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as unknown) : row.payload,
    state: row.state as OutboxState,
    attempts: Number(row.attempts),
    nextAt: isoInstant(row.next_at),
    createdAt: isoInstant(row.created_at),
    updatedAt: isoInstant(row.updated_at),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
  };
}
