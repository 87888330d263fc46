import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Kysely, SqliteDialect } from 'kysely';
import { type Database, DatabaseUnavailableError, type DurableStore, encodeCursor, LATEST_VERSION, migrate, MIGRATIONS, openDurableStore, SchemaTooNewError, sqliteDialect } from '../../../src/store/index.js';

/** Every released step's version, and those after version 1 (what a version-1 database is brought up by). */
const VERSIONS = MIGRATIONS.map((m) => m.version);
const AFTER_V1 = VERSIONS.filter((v) => v > 1);
const NEWER = LATEST_VERSION + 1;
import { describeDurableStoreContract } from './durable-store.contract.js';
import { digest, keyRecord, ledgerRow, rejection, resource } from './store-fixtures.js';

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
    expect(store.appliedMigrations).toEqual(VERSIONS);
    const inspect = new Sqlite(file, { readonly: true });
    try {
      expect(inspect.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(inspect.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(VERSIONS.map((version) => ({ version })));
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

  it('keys the ledger by row id in version 2, keeping version 1 rows (id = their request id) and the cursors handed out for them', async () => {
    const file = nextPath();
    mkdirSync(dirname(file), { recursive: true });
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new Sqlite(file) }) });
    await migrate(db, sqliteDialect, MIGRATIONS.filter((m) => m.version === 1));
    await db.destroy();
    const raw = new Sqlite(file);
    const v1 = raw.prepare(`INSERT INTO ledger (request_id, at, team, project, key_id, route, method, status, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, estimated, request_bytes, duration_ms)
      VALUES (?, ?, 'team-a', 'prod', 'key-1', '/v1/chat/completions', 'POST', 200, 'm', 1, 1, 2, 0, 0, 10, 5)`);
    for (const [id, at] of [['X', '2025-01-15T12:00:00.000Z'], ['X#2', '2025-01-15T12:00:00.000Z'], ['Y', '2025-01-15T12:00:01.000Z']]) v1.run(id, at);
    raw.close();
    const store = await openAt(file);
    expect(store.appliedMigrations).toEqual(AFTER_V1);
    expect(await store.insertLedgerRows([ledgerRow({ id: 'new-row', requestId: 'X', at: '2025-01-15T12:00:02.000Z' })])).toBe(1);
    const page = await store.pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10, after: encodeCursor({ at: '2025-01-15T12:00:00.000Z', id: 'X' }) });
    expect(page.rows.map((row) => [row.id, row.requestId])).toEqual([['X#2', 'X#2'], ['Y', 'Y'], ['new-row', 'X']]);
    // Version 6 summed the rows kept from before it per day; the new row was added as it was written.
    expect((await store.aggregateUsage({ from: '2025-01-15', to: '2025-01-15' })).map((a) => [a.team, a.requests, a.totalTokens])).toEqual([['team-a', 4, 2 * 3 + 120]]);
  });

  it('frees resource kinds in version 4, keeping the version 3 records', async () => {
    const file = nextPath();
    mkdirSync(dirname(file), { recursive: true });
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new Sqlite(file) }) });
    await migrate(db, sqliteDialect, MIGRATIONS.filter((m) => m.version <= 3));
    await db.destroy();
    const raw = new Sqlite(file);
    raw.prepare("INSERT INTO resources (kind, id, team, project, artifact, created_at) VALUES ('model', 'm-1', 'team-a', 'prod', 'e/p/n', '2025-01-15T12:00:00.000Z')").run();
    expect(() => raw.prepare("INSERT INTO resources (kind, id, team, project, created_at) VALUES ('run', 'r-0', 'team-a', 'prod', '2025-01-15T12:00:00.000Z')").run()).toThrow(/CHECK constraint failed/);
    raw.close();
    const store = await openAt(file);
    expect(store.appliedMigrations).toEqual(VERSIONS.filter((v) => v > 3));
    const run = resource({ kind: 'run', id: 'r-1', artifact: null });
    expect(await store.recordResource(run)).toEqual(run);
    expect((await store.listResources()).map((r) => [r.kind, r.id, r.artifact])).toEqual([['model', 'm-1', 'e/p/n'], ['run', 'r-1', null]]);
    expect(await store.getResource('run', 'r-1')).toEqual(run);
  });

  it('refuses a file migrated by a newer Tollgate with a one-line message', async () => {
    const file = nextPath();
    await (await openAt(file)).close();
    const raw = new Sqlite(file);
    raw.prepare(`INSERT INTO schema_migrations (version, applied_at) VALUES (${NEWER}, '2030-01-01T00:00:00.000Z')`).run();
    raw.close();
    const error = await rejection(openAt(file));
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error.message).toBe(`database schema is at version ${NEWER}, newer than this Tollgate (knows ${LATEST_VERSION}): upgrade Tollgate`);
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
