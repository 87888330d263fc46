import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, openDurableStore, SchemaTooNewError, type DurableStore } from '../../../src/store/index.js';
import { describeDurableStoreContract } from './durable-store.contract.js';
import { digest, keyRecord, rejection } from './store-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
let fileSeq = 0;
let path = '';
const nextPath = (): string => join(dir, `run-${++fileSeq}`, 'nested', 'tollgate.db');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeDurableStoreContract('sqlite', {
  open: () => openDurableStore({ url: '', path }),
  empty: async () => {
    path = nextPath();
  },
});

describe('SQLite store', () => {
  const open: DurableStore[] = [];
  const openAt = async (file: string, timeoutMs?: number): Promise<DurableStore> => {
    const store = await openDurableStore({ url: '', path: file, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    open.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('creates the file and its directories, in WAL mode, migrated once', async () => {
    const file = nextPath();
    const store = await openAt(file);
    expect(store.dialect).toBe('sqlite');
    expect(store.appliedMigrations).toEqual([1]);
    const inspect = new Sqlite(file, { readonly: true });
    try {
      expect(inspect.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(inspect.prepare('SELECT version FROM schema_migrations').all()).toEqual([{ version: 1 }]);
    } finally {
      inspect.close();
    }
  });

  it('stores booleans as integers and JSON as text', async () => {
    const file = nextPath();
    const store = await openAt(file);
    await store.createKey(keyRecord({ disabled: true }), digest('s1'));
    const inspect = new Sqlite(file, { readonly: true });
    try {
      expect(inspect.prepare('SELECT disabled, projects, limits, created_at FROM api_keys').get()).toEqual({
        disabled: 1,
        projects: '["default","prod"]',
        limits: '{"rpm":60,"costPerDay":2.5}',
        created_at: '2025-03-01T10:00:00.000Z',
      });
    } finally {
      inspect.close();
    }
  });

  it('refuses a file migrated by a newer Tollgate with a one-line message', async () => {
    const file = nextPath();
    await (await openAt(file)).close();
    const raw = new Sqlite(file);
    raw.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (3, '2030-01-01T00:00:00.000Z')").run();
    raw.close();
    const error = await rejection(openAt(file));
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error.message).toBe('database schema is at version 3, newer than this Tollgate (knows 1): upgrade Tollgate');
  });

  it('answers DatabaseUnavailableError when the file cannot be opened', async () => {
    const notADirectory = join(dir, 'plain-file');
    writeFileSync(notADirectory, 'x');
    const error = await rejection(openAt(join(notADirectory, 'tollgate.db')));
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(error.message).toMatch(/^cannot open SQLite file .*plain-file\/tollgate\.db: /);
  });

  it('answers DatabaseUnavailableError within the bound while another connection holds the write lock, and recovers', async () => {
    const file = nextPath();
    const store = await openAt(file, 200);
    const locker = new Sqlite(file);
    locker.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const error = await rejection(store.createKey(keyRecord(), digest('s1')));
      const waited = Date.now() - started;
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(error.message).toBe('SQLite is unavailable: database is locked');
      expect(waited).toBeGreaterThanOrEqual(190);
      expect(waited).toBeLessThan(1000);
      // Readers are not blocked by a writer in WAL mode.
      expect(await store.listKeys()).toEqual([]);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(await store.createKey(keyRecord(), digest('s1'))).toEqual(keyRecord());
  });
});
