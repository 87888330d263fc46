import type { DatabaseSettings, DurableStore } from './core/durable-store.js';
import type { SiblingChannel } from './core/change-feed.js';
import { silentLogger, type StoreLogger } from './core/logger.js';
import { KyselyDurableStore } from './kysely-store.js';
import { openPostgresBackend } from './postgres/postgres-backend.js';
import { openSqliteBackend } from './sqlite/sqlite-backend.js';

export interface OpenStoreOptions {
  logger?: StoreLogger;
  /** PostgreSQL application_name of the pool (the LISTEN connection adds `-listen`); default `tollgate`. */
  applicationName?: string;
  /** How often the idle LISTEN connection is probed, to notice a silently dead network (default 15000). */
  listenCheckIntervalMs?: number;
  /** How often a worker thread checkpoints the SQLite file's WAL (default 1000). */
  sqliteCheckpointIntervalMs?: number;
  /** Processes of this host on the same SQLite file (cluster workers): each committed change reaches them. */
  sqliteSiblings?: SiblingChannel;
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_POOL_SIZE = 10;

/**
 * Opens the durable store — PostgreSQL when `settings.url` is set, else the SQLite file at
 * `settings.path` — and migrates it. Resolves once it can be used. Rejects with
 * SchemaTooNewError when a newer Tollgate migrated the database, DatabaseUnavailableError when
 * it cannot be reached. The one module that imports the dialect folders (`postgres/`, `sqlite/`).
 */
export async function openDurableStore(settings: DatabaseSettings, options: OpenStoreOptions = {}): Promise<DurableStore> {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (settings.url === '') return new KyselyDurableStore(await openSqliteBackend(settings.path, timeoutMs, logger, options.sqliteCheckpointIntervalMs, options.sqliteSiblings));
  const backend = await openPostgresBackend(
    {
      url: settings.url,
      timeoutMs,
      poolSize: settings.poolSize ?? DEFAULT_POOL_SIZE,
      applicationName: options.applicationName ?? 'tollgate',
      listenCheckIntervalMs: options.listenCheckIntervalMs ?? 15_000,
    },
    logger,
  );
  return new KyselyDurableStore(backend);
}
