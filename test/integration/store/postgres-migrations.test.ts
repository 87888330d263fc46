import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDurableStore, SchemaTooNewError, type DurableStore } from '../../../src/store/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { rejection } from './store-fixtures.js';

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
    expect(stores.map((s) => s.appliedMigrations).sort((a, b) => b.length - a.length)).toEqual([[1], [], []]);
    expect(await database.query('SELECT version FROM schema_migrations ORDER BY version')).toEqual([{ version: 1 }]);
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
    await database.query("INSERT INTO schema_migrations (version, applied_at) VALUES (2, now())");
    const error = await rejection(openStore());
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error.message).toBe('database schema is at version 2, newer than this Tollgate (knows 1): upgrade Tollgate');
    await database.query('DELETE FROM schema_migrations WHERE version = 2');
    expect((await openStore()).appliedMigrations).toEqual([]);
  });
});
