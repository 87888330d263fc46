import { sql, type Kysely } from 'kysely';
import type { LedgerFile, LedgerMark, LedgerRow } from '../core/durable-store.js';
import { isoInstant, ledgerRowFrom } from '../core/rows.js';
import type { Database } from '../core/schema.js';
import { LEDGER_COLUMNS } from '../ledger/ledger-queries.js';

/**
 * Export cursors over the ledger in the order rows were WRITTEN, not the order of their `at`: an
 * instance writes its rows in batches, and rows it buffered through a database outage arrive
 * minutes late with an old `at`; a cursor over `at` would have passed them. (SPEC 24: lossless.)
 *
 * - SQLite: the rowid. One writer at a time, so a row committed later has a higher rowid than
 *   every row committed before it; the cursor never skips one. `mark.id` is the rowid.
 * - PostgreSQL: `written_at` (the inserting transaction's start, by the database's one clock),
 *   then id. A transaction may commit after a later-started one, so rows are read only once
 *   `written_at` is before `before` (now − exportSettleMs), longer than any store call may run.
 *   `mark.at` is written_at, `mark.id` the row's id.
 */
export type Dialect = 'postgres' | 'sqlite';

export async function selectCursor(db: Kysely<Database>, sink: string): Promise<LedgerMark | null> {
  const row = await db.selectFrom('outbox_cursors').selectAll().where('sink', '=', sink).executeTakeFirst();
  if (!row || row.after_id === null) return null;
  return { at: row.after_at === null ? '' : isoInstant(row.after_at), id: row.after_id };
}

/** Where row `id` stands in write order; undefined when retention deleted it meanwhile (the cursor then stays, and rows are sent again). */
async function positionOf(db: Kysely<Database>, dialect: Dialect, id: string): Promise<LedgerMark | undefined> {
  if (dialect === 'sqlite') {
    const row = await sql<{ seq: number }>`select rowid as seq from ledger where id = ${id}`.execute(db);
    const seq = row.rows[0]?.seq;
    return seq === undefined ? undefined : { at: '', id: String(seq) };
  }
  const row = await sql<{ written_at: Date | string }>`select written_at from ledger where id = ${id}`.execute(db);
  const writtenAt = row.rows[0]?.written_at;
  return writtenAt === undefined ? undefined : { at: isoInstant(writtenAt), id };
}

/** Moves the cursor to the last row sent (by its id); call inside the transaction that records the batch. */
export async function saveCursor(db: Kysely<Database>, dialect: Dialect, sink: string, lastRowId: string, now: string): Promise<void> {
  const mark = await positionOf(db, dialect, lastRowId);
  if (mark === undefined) return;
  const afterAt = mark.at === '' ? null : mark.at;
  await db
    .insertInto('outbox_cursors')
    .values({ sink, after_at: afterAt, after_id: mark.id, updated_at: now })
    .onConflict((oc) => oc.column('sink').doUpdateSet({ after_at: afterAt, after_id: mark.id, updated_at: now }))
    .execute();
}

/** The next rows past `cursor` in write order, at most `limit` (PostgreSQL: only those written before `before`). */
export async function selectLedgerAfter(db: Kysely<Database>, dialect: Dialect, cursor: LedgerMark | null, before: string, limit: number): Promise<LedgerRow[]> {
  if (dialect === 'sqlite') {
    const after = cursor === null ? 0 : Number(cursor.id);
    const rows = await db.selectFrom('ledger').selectAll().where(sql<boolean>`rowid > ${after}`).orderBy(sql`rowid`).limit(limit).execute();
    return rows.map(ledgerRowFrom);
  }
  const rows = await db
    .selectFrom('ledger')
    .selectAll()
    .where(sql.ref('written_at'), '<', before)
    .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple(sql.ref('written_at'), 'id'), '>', eb.tuple(cursor!.at, cursor!.id))))
    .orderBy(sql.ref('written_at'))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(ledgerRowFrom);
}

/** A ledger column's row field: `request_id` → `requestId` (every ledger column follows the rule). */
const fieldOf = (column: string): keyof LedgerRow => column.replace(/_([a-z])/g, (_m, letter: string) => letter.toUpperCase()) as keyof LedgerRow;

/** The SQLite file as an export reader opens it: the same rows as selectLedgerAfter, in raw form (seq first). */
export function sqliteLedgerFile(path: string, busyTimeoutMs: number): LedgerFile {
  return {
    dialect: 'sqlite',
    path,
    select: `select rowid as seq, ${LEDGER_COLUMNS.join(', ')} from ledger where rowid > ? order by rowid limit ?`,
    fields: LEDGER_COLUMNS.map(fieldOf),
    busyTimeoutMs,
  };
}

/** PostgreSQL's columns as LedgerRow has them: `at` as ISO text (ms, as written), int8 as numbers (ledger amounts are below 2^53). */
const POSTGRES_FIELD_SQL: Partial<Record<(typeof LEDGER_COLUMNS)[number], string>> = {
  at: `to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  cost_nanos: 'cost_nanos::float8',
  request_bytes: 'request_bytes::float8',
};

/** The PostgreSQL ledger as an export reader reads it: the rows of selectLedgerAfter, in raw form. */
export function postgresLedgerFile(url: string, timeoutMs: number): LedgerFile {
  const columns = LEDGER_COLUMNS.map((column) => POSTGRES_FIELD_SQL[column] ?? column).join(', ');
  return {
    dialect: 'postgres',
    url,
    selectFirst: `select ${columns} from ledger where written_at < $1 order by written_at, id limit $2`,
    selectAfter: `select ${columns} from ledger where written_at < $1 and (written_at, id) > ($2::timestamptz, $3) order by written_at, id limit $4`,
    fields: LEDGER_COLUMNS.map(fieldOf),
    timeoutMs,
  };
}
