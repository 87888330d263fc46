import type { Insertable, Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';
import type { LedgerPage, LedgerPageQuery, LedgerRow } from './durable-store.js';
import { decodeCursor, encodeCursor } from './ledger-cursor.js';
import { isoInstant, ledgerRowFrom } from './rows.js';
import type { Database, LedgerTable } from './schema.js';
import { dayRange } from './utc-days.js';

/** Rows per INSERT: 16 parameters each stays under SQLite's 32766 and PostgreSQL's 65535. */
const INSERT_CHUNK = 1000;
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

/** Inserts rows whose requestId is new (inside one transaction); answers how many. */
export async function insertLedger(trx: Kysely<Database>, dialect: SqlDialect, rows: readonly LedgerRow[]): Promise<number> {
  const values = rows.map((row) => ledgerInsert(row, dialect));
  let inserted = 0;
  for (let i = 0; i < values.length; i += INSERT_CHUNK) {
    const result = await trx
      .insertInto('ledger')
      .values(values.slice(i, i + INSERT_CHUNK))
      .onConflict((oc) => oc.column('request_id').doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
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
