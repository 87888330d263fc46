import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { ChangeFeed, type SiblingChannel } from '../core/change-feed.js';
import { sqliteDialect } from '../core/dialect.js';
import { DatabaseUnavailableError } from '../core/errors.js';
import type { StoreLogger } from '../core/logger.js';
import { migrate } from '../core/migrate.js';
import type { Database } from '../core/schema.js';
import type { LedgerInserter, StoreBackend } from '../core/store-backend.js';
import { LEDGER_COLUMNS } from '../ledger/ledger-queries.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';

/** SQLite's own default for `wal_autocheckpoint`, put back should the checkpoint worker stop. */
const AUTOCHECKPOINT_PAGES = 1000;

/** Result codes that mean the file cannot be used now (locked, unreadable, full), not that the query is wrong. */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|CORRUPT|NOTADB|PROTOCOL|PERM|AUTH|NOLFS)/;

export function sqliteFailure(error: unknown): unknown {
  if (error instanceof Sqlite.SqliteError && UNAVAILABLE.test(error.code)) {
    return new DatabaseUnavailableError(`SQLite is unavailable: ${error.message}`, { cause: error });
  }
  return error;
}

/** Opens (creating it and its directory if needed) the file in WAL mode, and migrates it. */
function openFile(path: string, timeoutMs: number): Sqlite.Database {
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    // `timeout` is SQLite's busy_timeout: how long a statement waits for another connection's lock.
    const file = new Sqlite(path, { timeout: timeoutMs });
    // WAL: readers never wait for the writer, and a commit is one append. NORMAL syncs the WAL
    // at checkpoints rather than on every commit: a commit survives the process crashing, and
    // only an OS crash or power cut can lose the last ones. FULL put an fsync (milliseconds)
    // on the event loop for every ledger batch, which showed in every request's latency.
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = NORMAL');
    file.pragma('foreign_keys = ON');
    return file;
  } catch (error) {
    throw new DatabaseUnavailableError(`cannot open SQLite file ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * Ledger rows through one prepared statement, run per row inside the caller's transaction
 * (the same connection Kysely holds). Compiling a multi-row INSERT of a whole batch cost about
 * as much CPU as SQLite's own work, on the event loop.
 */
function ledgerInserter(file: Sqlite.Database): LedgerInserter {
  const insert = file.prepare(
    `insert into ledger (${LEDGER_COLUMNS.join(', ')}) values (${LEDGER_COLUMNS.map(() => '?').join(', ')}) on conflict (id) do nothing`,
  );
  return async (_trx, values) => {
    const written: string[] = [];
    for (const value of values) if (insert.run(LEDGER_COLUMNS.map((column) => value[column])).changes > 0) written.push(value.id);
    return written;
  };
}

/**
 * The WAL is copied into the file by a worker thread, not by whichever commit crosses SQLite's
 * threshold (see sqlite-checkpointer.ts); an in-memory database has no WAL.
 */
function checkpointOffTheEventLoop(file: Sqlite.Database, path: string, intervalMs: number, timeoutMs: number, logger: StoreLogger): SqliteCheckpointer | undefined {
  if (path === ':memory:') return undefined;
  file.pragma('wal_autocheckpoint = 0');
  return new SqliteCheckpointer({
    path,
    intervalMs,
    busyTimeoutMs: timeoutMs,
    logger,
    onFailure: () => {
      if (file.open) file.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    },
  });
}

/**
 * How long opening waits for another connection's write lock while migrating: workers started
 * together on one file migrate one after the other, and a busy machine can take longer than the
 * request path's `timeoutMs` to migrate a fresh file — the worker that gave up then started
 * without its store and answered admin writes 503. Start-up only (PostgreSQL's migration waits
 * on its advisory lock the same way).
 */
const MIGRATION_BUSY_TIMEOUT_MS = 60_000;

/** The embedded store: one file, one connection; changes are announced locally and to `siblings` (workers on the same file). */
export async function openSqliteBackend(path: string, timeoutMs: number, logger: StoreLogger, checkpointIntervalMs = 1000, siblings?: SiblingChannel): Promise<StoreBackend> {
  const file = openFile(path, timeoutMs);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
  let appliedMigrations: number[];
  try {
    file.pragma(`busy_timeout = ${Math.max(timeoutMs, MIGRATION_BUSY_TIMEOUT_MS)}`);
    appliedMigrations = await migrate(db, sqliteDialect);
    file.pragma(`busy_timeout = ${timeoutMs}`);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw sqliteFailure(error);
  }
  const checkpointer = checkpointOffTheEventLoop(file, path, checkpointIntervalMs, timeoutMs, logger);
  return {
    db,
    dialect: sqliteDialect,
    insertLedgerValues: ledgerInserter(file),
    ...(path === ':memory:' ? {} : { file: { sqlite: path } }),
    timeoutMs,
    feed: new ChangeFeed(logger, siblings),
    appliedMigrations,
    classifyFailure: sqliteFailure,
    release: () => checkpointer?.stop() ?? Promise.resolve(),
  };
}
