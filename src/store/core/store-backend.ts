import type { Insertable, Kysely } from 'kysely';
import type { ChangeFeed } from './change-feed.js';
import type { SqlDialect } from './dialect.js';
import type { Database, LedgerTable } from './schema.js';

/**
 * Inserts rows, skipping ids already taken; answers how many it wrote. Each backend brings its
 * own (SQLite: one prepared statement run per row; PostgreSQL: one `unnest` statement per
 * batch): compiling a multi-row INSERT for every batch cost about as much CPU as the database's
 * own work, and the gateway pays it on its event loop.
 */
/** Answers the ids of the rows it inserted (a row whose id was present already is skipped): the daily sums count only those. */
export type LedgerInserter = (trx: Kysely<Database>, values: ReadonlyArray<Insertable<LedgerTable>>) => Promise<readonly string[]>;

/**
 * What one implementation (`postgres/`, `sqlite/`) hands the shared store: its database, and
 * how to tell and release it. Here, below both, so that neither dialect imports the store that
 * wraps it.
 */
export interface StoreBackend {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialect;
  readonly timeoutMs: number;
  readonly feed: ChangeFeed;
  readonly appliedMigrations: readonly number[];
  /** Turns a driver failure into DatabaseUnavailableError when it means "cannot answer". */
  readonly classifyFailure: (error: unknown) => unknown;
  /** The backend's own way to insert ledger rows (SQLite: a prepared statement; PostgreSQL: `unnest`). */
  readonly insertLedgerValues: LedgerInserter;
  /** Where a second connection reaches the same database: the SQLite file, the PostgreSQL URL; undefined in memory. */
  readonly file?: { readonly sqlite: string } | { readonly postgres: string };
  /** Releases what the backend owns beyond the Kysely instance (LISTEN connection). */
  readonly release: () => Promise<void>;
}
