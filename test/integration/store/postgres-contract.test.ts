import { afterAll, beforeAll } from 'vitest';
import { openDurableStore } from '../../../src/store/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { describeDurableStoreContract } from './durable-store.contract.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

describeDurableStoreContract('postgres', {
  open: () => openDurableStore({ url: database.url, path: '' }, { applicationName: 'store-contract' }),
  // The first test finds no tables yet; later ones empty them.
  empty: async () => {
    await database.query(`DO $$ BEGIN
      IF to_regclass('ledger') IS NOT NULL THEN TRUNCATE api_keys, key_secrets, resources, audit_log, ledger, teams, admin_keys, admin_key_secrets, console_sessions, ledger_daily; END IF;
    END $$`);
  },
});
