import type { Insertable, Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';
import type { LedgerPage, LedgerPageQuery, LedgerRow } from './durable-store.js';
import { decodeCursor, encodeCursor } from './ledger-cursor.js';
import { isoInstant, ledgerRowFrom } from './rows.js';
import type { Database, LedgerTable } from './schema.js';
import { dayRange } from './utc-days.js';

/** Ids per lookup of the rows an insert found taken: one parameter each, far under SQLite's 32766 and PostgreSQL's 65535. */
const LOOKUP_CHUNK = 1000;
/** Rows per retention DELETE: each statement stays well inside the call bound (SQLite: blocks the event loop briefly). */
const DELETE_CHUNK = { postgres: 10_000, sqlite: 500 } as const;
export const MAX_PAGE = 1000;

function integer(value: number, name: string): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`ledger ${name} must be an integer, got ${value}`);
  return value;
}

function ledgerInsert(row: LedgerRow, dialect: SqlDialect): Insertable<LedgerTable> {
  return {
    request_id: row.requestId,
    at: isoInstant(row.at),
    team: row.team,
    project: row.project,
    key_id: row.keyId,
    route: row.route,
    method: row.method,
    status: integer(row.status, 'status'),
    model: row.model,
    prompt_tokens: integer(row.promptTokens, 'promptTokens'),
    completion_tokens: integer(row.completionTokens, 'completionTokens'),
    total_tokens: integer(row.totalTokens, 'totalTokens'),
    cost_nanos: integer(row.costNanos, 'costNanos'),
    estimated: dialect.flag(row.estimated),
    request_bytes: integer(row.requestBytes, 'requestBytes'),
    duration_ms: integer(row.durationMs, 'durationMs'),
  };
}

/** The ledger's columns in table order: what a prepared single-row insert binds. */
export const LEDGER_COLUMNS = [
  'request_id', 'at', 'team', 'project', 'key_id', 'route', 'method', 'status', 'model',
  'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos', 'estimated', 'request_bytes', 'duration_ms',
] as const satisfies ReadonlyArray<keyof LedgerTable>;

/**
 * Inserts rows under their own request ids, skipping taken ids; answers the ids it wrote. Each
 * backend brings its own (SQLite: one prepared statement run per row; PostgreSQL: one `unnest`
 * statement per batch): compiling a multi-row INSERT for every batch cost about as much CPU as
 * the database's own work, and the gateway pays it on its event loop.
 */
export type LedgerInserter = (trx: Kysely<Database>, values: ReadonlyArray<Insertable<LedgerTable>>) => Promise<Set<string>>;

/** Repeats of one x-request-id recorded apart: `<id>#2`, `<id>#3`, … up to this many. */
const MAX_REPEATS = 1000;

/** Whether a stored row is `row` itself (a batch written again after a lost reply), not another request that reused its id. */
function sameRow(stored: LedgerRow | undefined, row: LedgerRow): boolean {
  if (stored === undefined) return false;
  const given = { ...row, requestId: stored.requestId, at: isoInstant(row.at) };
  return (Object.keys(given) as Array<keyof LedgerRow>).every((field) => stored[field] === given[field]);
}

/**
 * Inserts rows (inside one transaction); answers how many were new. A row already stored with
 * the same content is skipped (a batch retried after a lost reply is not counted twice). A
 * different request under an id already taken — a client reusing its x-request-id — is
 * recorded as `<id>#2` (then `#3`, …): every request is billed, whatever ids its client sends.
 */
export async function insertLedger(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  rows: readonly LedgerRow[],
  insertValues: LedgerInserter,
): Promise<number> {
  let inserted = 0;
  let pending = rows;
  for (let repeat = 1; pending.length > 0 && repeat <= MAX_REPEATS; repeat++) {
    // One row per id in a statement: a later row with the same id is compared with what was stored.
    const ids = pending.map((row) => (repeat === 1 ? row.requestId : `${row.requestId}#${repeat}`));
    const firsts = new Set<number>();
    const seen = new Set<string>();
    for (let i = 0; i < ids.length; i++) {
      if (seen.has(ids[i]!)) continue;
      seen.add(ids[i]!);
      firsts.add(i);
    }
    const values = pending.flatMap((row, i) => (firsts.has(i) ? [ledgerInsert({ ...row, requestId: ids[i]! }, dialect)] : []));
    const written = await insertValues(trx, values);
    inserted += written.size;
    const conflicts = pending.flatMap((row, i) => (firsts.has(i) && written.has(ids[i]!) ? [] : [{ row, id: ids[i]! }]));
    if (conflicts.length === 0) break;
    const stored = new Map<string, LedgerRow>();
    const conflictIds = [...new Set(conflicts.map((c) => c.id))];
    for (let i = 0; i < conflictIds.length; i += LOOKUP_CHUNK) {
      const found = await trx.selectFrom('ledger').selectAll().where('request_id', 'in', conflictIds.slice(i, i + LOOKUP_CHUNK)).execute();
      for (const row of found) stored.set(row.request_id, ledgerRowFrom(row));
    }
    pending = conflicts.filter(({ row, id }) => !sameRow(stored.get(id), row)).map(({ row }) => row);
  }
  return inserted;
}

/** One page in (at, request_id) order, by keyset from the cursor: the cost does not grow with the page number. */
export async function selectLedgerPage(db: Kysely<Database>, query: LedgerPageQuery): Promise<LedgerPage> {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE) throw new RangeError(`limit must be 1..${MAX_PAGE}, got ${query.limit}`);
  const { start, end } = dayRange(query.from, query.to);
  const after = query.after === undefined ? undefined : decodeCursor(query.after);
  const rows = await db
    .selectFrom('ledger')
    .selectAll()
    .where('at', '>=', start)
    .where('at', '<', end)
    .$if(query.team !== undefined, (q) => q.where('team', '=', query.team!))
    .$if(query.project !== undefined, (q) => q.where('project', '=', query.project!))
    .$if(query.key !== undefined, (q) => q.where('key_id', '=', query.key!))
    .$if(after !== undefined, (q) => q.where((eb) => eb(eb.refTuple('at', 'request_id'), '>', eb.tuple(after!.at, after!.requestId))))
    .orderBy('at')
    .orderBy('request_id')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit).map(ledgerRowFrom);
  const last = page.at(-1);
  return { rows: page, hasMore: rows.length > query.limit, lastId: last ? encodeCursor({ at: last.at, requestId: last.requestId }) : null };
}

/** Deletes one chunk of rows older than `before`; answers how many (fewer than a chunk: done). */
export async function deleteLedgerChunk(db: Kysely<Database>, dialect: SqlDialect, before: string): Promise<{ deleted: number; more: boolean }> {
  const chunk = DELETE_CHUNK[dialect.name];
  const oldest = db.selectFrom('ledger').select('request_id').where('at', '<', before).limit(chunk);
  const result = await db.deleteFrom('ledger').where('request_id', 'in', oldest).executeTakeFirst();
  const deleted = Number(result.numDeletedRows);
  return { deleted, more: deleted === chunk };
}
