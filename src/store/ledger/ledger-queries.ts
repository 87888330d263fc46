import type { Insertable, Kysely } from 'kysely';
import { dayRange } from '../../calendar.js';
import type { SqlDialect } from '../core/dialect.js';
import type { LedgerPage, LedgerPageQuery, LedgerRow } from '../core/durable-store.js';
import { isoInstant, ledgerRowFrom } from '../core/rows.js';
import type { Database, LedgerTable } from '../core/schema.js';
import type { LedgerInserter } from '../core/store-backend.js';
import { decodeCursor, encodeCursor } from './ledger-cursor.js';
import { addToDaily, type DailyPart } from './ledger-daily.js';

/** Rows per retention DELETE: each statement stays well inside the call bound (SQLite: blocks the event loop briefly). */
const DELETE_CHUNK = { postgres: 10_000, sqlite: 500 } as const;
export const MAX_PAGE = 1000;

function integer(value: number, name: string): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`ledger ${name} must be an integer, got ${value}`);
  return value;
}

function ledgerInsert(row: LedgerRow, dialect: SqlDialect): Insertable<LedgerTable> {
  return {
    id: row.id,
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
    trace_id: row.traceId,
    requested_model: row.requestedModel,
    fallback_from: row.fallbackFrom,
  };
}

/** The ledger's columns in table order: what a prepared single-row insert binds. */
export const LEDGER_COLUMNS = [
  'id', 'request_id', 'at', 'team', 'project', 'key_id', 'route', 'method', 'status', 'model',
  'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos', 'estimated', 'request_bytes', 'duration_ms', 'trace_id',
  'requested_model', 'fallback_from',
] as const satisfies ReadonlyArray<keyof LedgerTable>;

/**
 * Inserts rows (inside one transaction); answers how many were new. A row is known by the id the
 * gateway made for its request, never by its content nor by the client's x-request-id: a batch
 * retried after a lost reply is skipped row by row, while two identical requests, or requests
 * that reuse or pre-seed an x-request-id, are rows of their own.
 */
export async function insertLedger(trx: Kysely<Database>, dialect: SqlDialect, rows: readonly LedgerRow[], insertValues: LedgerInserter): Promise<number> {
  const values = rows.map((row) => ledgerInsert(row, dialect));
  const inserted = new Set(await insertValues(trx, values));
  await addToDaily(trx, values.filter((value) => inserted.has(value.id)) as DailyPart[], 1);
  return inserted.size;
}

/** One page in (at, id) order, by keyset from the cursor: the cost does not grow with the page number. */
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
    .$if(after !== undefined, (q) => q.where((eb) => eb(eb.refTuple('at', 'id'), '>', eb.tuple(after!.at, after!.id))))
    .orderBy('at')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit).map(ledgerRowFrom);
  const last = page.at(-1);
  return { rows: page, hasMore: rows.length > query.limit, lastId: last ? encodeCursor({ at: last.at, id: last.id }) : null };
}

/** Deletes one chunk of rows older than `before`, and takes them from the daily sums (call it in a transaction); answers how many (fewer than a chunk: done). */
export async function deleteLedgerChunk(db: Kysely<Database>, dialect: SqlDialect, before: string): Promise<{ deleted: number; more: boolean }> {
  const chunk = DELETE_CHUNK[dialect.name];
  // By the row's own key: newer rows may share an old row's request_id.
  const oldest = db.selectFrom('ledger').select('id').where('at', '<', before).limit(chunk);
  const gone = await db
    .deleteFrom('ledger')
    .where('id', 'in', oldest)
    .returning(['at', 'team', 'project', 'key_id', 'model', 'method', 'route', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos'])
    .execute();
  await addToDaily(db, gone.map((row) => ({ ...row, at: row.at instanceof Date ? row.at.toISOString() : row.at })), -1);
  return { deleted: gone.length, more: gone.length === chunk };
}
