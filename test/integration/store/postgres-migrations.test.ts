import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type DurableStore, encodeCursor, LATEST_VERSION, migrate, MIGRATIONS, openDurableStore, postgresDialect, SchemaTooNewError } from '../../../src/store/index.js';

/** Every released step's version, and those after version 1 (what a version-1 database is brought up by). */
const VERSIONS = MIGRATIONS.map((m) => m.version);
const AFTER_V1 = VERSIONS.filter((v) => v > 1);
const NEWER = LATEST_VERSION + 1;
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { ledgerRow, rejection, resource } from './store-fixtures.js';

let database: TestDatabase;
const open: DurableStore[] = [];

const openStore = async (): Promise<DurableStore> => {
  const store = await openDurableStore({ url: database.url, path: '' }, { applicationName: 'store-migrations' });
  open.push(store);
  return store;
};

beforeAll(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await database.drop();
});

describe('PostgreSQL migrations', () => {
  it('migrates a fresh database once when three instances open it together', async () => {
    const stores = await Promise.all([openStore(), openStore(), openStore()]);
    expect(stores.map((s) => s.appliedMigrations).sort((a, b) => b.length - a.length)).toEqual([VERSIONS, [], []]);
    expect(await database.query('SELECT version FROM schema_migrations ORDER BY version')).toEqual(VERSIONS.map((version) => ({ version })));
    expect(stores.map((s) => s.dialect)).toEqual(['postgres', 'postgres', 'postgres']);
  });

  it('uses native types: timestamptz, boolean, jsonb, bigint, byte-order text', async () => {
    await openStore();
    const columns = await database.query<{ column_name: string; data_type: string; collation_name: string | null }>(
      `SELECT column_name, data_type, collation_name FROM information_schema.columns
       WHERE table_name = 'ledger' AND column_name IN ('at', 'estimated', 'cost_nanos', 'request_id') ORDER BY column_name`,
    );
    expect(columns).toEqual([
      { column_name: 'at', data_type: 'timestamp with time zone', collation_name: null },
      { column_name: 'cost_nanos', data_type: 'bigint', collation_name: null },
      { column_name: 'estimated', data_type: 'boolean', collation_name: null },
      { column_name: 'request_id', data_type: 'text', collation_name: 'C' },
    ]);
    const [limits] = await database.query<{ data_type: string }>("SELECT data_type FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name = 'limits'");
    expect(limits).toEqual({ data_type: 'jsonb' });
  });

  it('refuses a database migrated by a newer Tollgate with a one-line message, and opens again once it is not', async () => {
    await openStore();
    await database.query(`INSERT INTO schema_migrations (version, applied_at) VALUES (${NEWER}, now())`);
    const error = await rejection(openStore());
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error.message).toBe(`database schema is at version ${NEWER}, newer than this Tollgate (knows ${LATEST_VERSION}): upgrade Tollgate`);
    await database.query(`DELETE FROM schema_migrations WHERE version = ${NEWER}`);
    expect((await openStore()).appliedMigrations).toEqual([]);
  });

  it('frees resource kinds in version 4, keeping the version 3 records', async () => {
    const old = await createTestDatabase();
    try {
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: old.url }) }) });
      await migrate(db, postgresDialect, MIGRATIONS.filter((m) => m.version <= 3));
      await db.destroy();
      await old.query("INSERT INTO resources (kind, id, team, project, artifact, created_at) VALUES ('model', 'm-1', 'team-a', 'prod', 'e/p/n', '2025-01-15T12:00:00.000Z')");
      await expect(old.query("INSERT INTO resources (kind, id, team, project, created_at) VALUES ('run', 'r-0', 'team-a', 'prod', now())")).rejects.toThrow(/check constraint/);
      const store = await openDurableStore({ url: old.url, path: '' }, { applicationName: 'store-migrations' });
      open.push(store);
      expect(store.appliedMigrations).toEqual(VERSIONS.filter((v) => v > 3));
      const run = resource({ kind: 'run', id: 'r-1', artifact: null });
      expect(await store.recordResource(run)).toEqual(run);
      expect((await store.listResources()).map((r) => [r.kind, r.id, r.artifact])).toEqual([['model', 'm-1', 'e/p/n'], ['run', 'r-1', null]]);
      expect(await store.getResource('run', 'r-1')).toEqual(run);
    } finally {
      await Promise.all(open.splice(0).map((s) => s.close()));
      await old.drop();
    }
  });

  it('keys the ledger by row id in version 2, keeping version 1 rows (id = their request id) and the cursors handed out for them', async () => {
    const old = await createTestDatabase();
    try {
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: old.url }) }) });
      await migrate(db, postgresDialect, MIGRATIONS.filter((m) => m.version === 1));
      await db.destroy();
      const v1 = `INSERT INTO ledger (request_id, at, team, project, key_id, route, method, status, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, estimated, request_bytes, duration_ms)
        VALUES ($1, $2, 'team-a', 'prod', 'key-1', '/v1/chat/completions', 'POST', 200, 'm', 1, 1, 2, 0, false, 10, 5)`;
      for (const [id, at] of [['X', '2025-01-15T12:00:00.000Z'], ['X#2', '2025-01-15T12:00:00.000Z'], ['Y', '2025-01-15T12:00:01.000Z']]) await old.query(v1, [id, at]);
      const store = await openDurableStore({ url: old.url, path: '' }, { applicationName: 'store-migrations' });
      open.push(store);
      expect(store.appliedMigrations).toEqual(AFTER_V1);
      expect(await store.insertLedgerRows([ledgerRow({ id: 'new-row', requestId: 'X', at: '2025-01-15T12:00:02.000Z' })])).toBe(1);
      const page = await store.pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10, after: encodeCursor({ at: '2025-01-15T12:00:00.000Z', id: 'X' }) });
      expect(page.rows.map((row) => [row.id, row.requestId])).toEqual([['X#2', 'X#2'], ['Y', 'Y'], ['new-row', 'X']]);
      // Version 6 summed the rows kept from before it per day; the new row was added as it was written.
      expect((await store.aggregateUsage({ from: '2025-01-15', to: '2025-01-15' })).map((a) => [a.team, a.requests, a.totalTokens])).toEqual([['team-a', 4, 2 * 3 + 120]]);
    } finally {
      await Promise.all(open.splice(0).map((s) => s.close()));
      await old.drop();
    }
  });
});
