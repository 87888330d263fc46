import { Kysely, PostgresDialect } from 'kysely';
import { ChangeFeed } from './change-feed.js';
import { withinDeadline } from './deadline.js';
import { postgresDialect } from './dialect.js';
import type { StoreBackend } from './kysely-store.js';
import type { StoreLogger } from './logger.js';
import { migrate } from './migrate.js';
import { createPostgresPool, DeadlinePool, postgresFailure } from './postgres-pool.js';
import { PostgresChangeListener } from './postgres-listener.js';
import type { Database } from './schema.js';

export interface PostgresBackendSettings {
  readonly url: string;
  readonly timeoutMs: number;
  readonly poolSize: number;
  /** Pool connections carry this name; the LISTEN connection `<name>-listen`. */
  readonly applicationName: string;
  readonly listenCheckIntervalMs: number;
}

/**
 * Connects, migrates (waiting for another instance's migration if one runs), and starts
 * listening for other instances' changes. DatabaseUnavailableError when PostgreSQL cannot be
 * reached within `timeoutMs`.
 */
export async function openPostgresBackend(settings: PostgresBackendSettings, logger: StoreLogger): Promise<StoreBackend> {
  const pool = createPostgresPool(settings, logger);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new DeadlinePool(pool) }) });
  let appliedMigrations: number[];
  try {
    // Reach the server within the bound; the migration itself (and waiting for another's) is not bounded.
    await withinDeadline(settings.timeoutMs, () => pool.query('select 1')).catch((error: unknown) => {
      throw postgresFailure(error);
    });
    appliedMigrations = await migrate(db, postgresDialect);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  const feed = new ChangeFeed(logger);
  const listener = new PostgresChangeListener({
    url: settings.url,
    applicationName: `${settings.applicationName}-listen`,
    timeoutMs: settings.timeoutMs,
    onNotification: (payload) => feed.receive(payload),
    onResync: () => feed.emit({ kind: 'resync' }),
    logger,
    checkEveryMs: settings.listenCheckIntervalMs,
  });
  await listener.start();
  return {
    db,
    dialect: postgresDialect,
    timeoutMs: settings.timeoutMs,
    feed,
    appliedMigrations,
    // The connection wrapper has typed every driver failure already; other errors are the store's own.
    classifyFailure: (error) => error,
    release: () => listener.close(),
  };
}
