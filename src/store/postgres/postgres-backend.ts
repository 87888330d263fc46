import { Kysely, PostgresDialect, sql } from 'kysely';
import { ChangeFeed } from '../core/change-feed.js';
import { withinDeadline } from '../core/deadline.js';
import { postgresDialect } from '../core/dialect.js';
import type { StoreLogger } from '../core/logger.js';
import { migrate } from '../core/migrate.js';
import type { Database } from '../core/schema.js';
import type { LedgerInserter, StoreBackend } from '../core/store-backend.js';
import { LEDGER_COLUMNS } from '../ledger/ledger-queries.js';
import { PostgresChangeListener } from './postgres-listener.js';
import { createPostgresPool, DeadlinePool, postgresFailure } from './postgres-pool.js';

/** The SQL type of each ledger column, as an array parameter of `unnest`. */
const LEDGER_ARRAY_TYPES: Record<(typeof LEDGER_COLUMNS)[number], string> = {
  id: 'text[]',
  request_id: 'text[]',
  at: 'timestamptz[]',
  team: 'text[]',
  project: 'text[]',
  key_id: 'text[]',
  route: 'text[]',
  method: 'text[]',
  status: 'integer[]',
  model: 'text[]',
  prompt_tokens: 'integer[]',
  completion_tokens: 'integer[]',
  total_tokens: 'integer[]',
  cost_nanos: 'bigint[]',
  estimated: 'boolean[]',
  request_bytes: 'bigint[]',
  duration_ms: 'integer[]',
  trace_id: 'text[]',
  requested_model: 'text[]',
  fallback_from: 'text[]',
};

/**
 * A batch of ledger rows as one array per column, spread by `unnest`: the statement's text is
 * the same for every batch (17 parameters, not 17 per row), so the gateway compiles no
 * thousand-placeholder INSERT per batch and PostgreSQL parses one short statement.
 */
const insertLedgerByColumns: LedgerInserter = async (trx, values) => {
  const arrays = LEDGER_COLUMNS.map((column) => sql`${values.map((value) => value[column])}::${sql.raw(LEDGER_ARRAY_TYPES[column])}`);
  const result = await sql`insert into ledger (${sql.join(LEDGER_COLUMNS.map((column) => sql.ref(column)))})
    select * from unnest(${sql.join(arrays)}) on conflict (id) do nothing returning id`.execute(trx);
  return (result.rows as Array<{ id: string }>).map((row) => row.id);
};

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
    insertLedgerValues: insertLedgerByColumns,
    file: { postgres: settings.url },
    // The connection wrapper has typed every driver failure already; other errors are the store's own.
    classifyFailure: (error) => error,
    release: () => listener.close(),
  };
}
