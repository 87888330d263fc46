import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDurableStore, SqliteCheckpointer } from '../../../src/store/index.js';
import { ledgerRow } from './store-fixtures.js';

// A commit that crosses SQLite's automatic-checkpoint threshold copies the WAL into the file
// and fsyncs it with the event loop blocked; the store leaves that to a worker thread.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const warnings: string[] = [];
const logger = { warn: (_obj: object, msg: string) => void warnings.push(msg) };

/** A WAL-mode file with `rows` rows written and not checkpointed. */
function walFile(name: string, rows: number): { path: string; file: Sqlite.Database } {
  const path = join(dir, name);
  const file = new Sqlite(path);
  file.pragma('journal_mode = WAL');
  file.pragma('wal_autocheckpoint = 0');
  file.exec('create table t (id integer primary key, body text)');
  const insert = file.prepare('insert into t (body) values (?)');
  file.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run('x'.repeat(200));
  })();
  return { path, file };
}

describe('the SQLite store checkpoints its WAL from a worker thread', () => {
  it('leaves the database file alone while ledger batches commit, and holds every row once closed', async () => {
    const path = join(dir, 'ledger.db');
    // An hour between checkpoints: within the test, only commits could checkpoint.
    const store = await openDurableStore({ url: '', path, timeoutMs: 2000 }, { sqliteCheckpointIntervalMs: 3_600_000 });
    const sizeAtOpen = statSync(path).size;
    for (let batch = 0; batch < 120; batch++) {
      const rows = Array.from({ length: 100 }, (_, i) => ledgerRow({ requestId: `req-${batch}-${i}` }));
      expect(await store.insertLedgerRows(rows)).toBe(100);
    }
    // 12,000 rows are well past SQLite's 1,000-page threshold (about 4 MB of WAL).
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(4096 * 1000);
    expect(statSync(path).size).toBe(sizeAtOpen);

    await store.close();
    // The last connection to close checkpoints and removes the WAL: the rows are in the file.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reader = new Sqlite(path, { readonly: true });
    expect(reader.prepare('select count(*) as n from ledger').get()).toEqual({ n: 12_000 });
    reader.close();
  });

  it('copies every WAL frame into the file when asked, and a last time when stopped', async () => {
    const { path, file } = walFile('direct.db', 2000);
    const before = statSync(path).size;
    const checkpointer = new SqliteCheckpointer({ path, intervalMs: 3_600_000, busyTimeoutMs: 1000, logger, onFailure: () => undefined });

    const result = await checkpointer.checkpointNow();
    expect(result.busy).toBe(0);
    expect(result.log).toBeGreaterThan(0);
    expect(result.checkpointed).toBe(result.log);
    expect(statSync(path).size).toBeGreaterThan(before);

    file.prepare('insert into t (body) values (?)').run('after');
    await checkpointer.stop();
    file.close();
    const reader = new Sqlite(path, { readonly: true });
    expect(reader.prepare('select count(*) as n from t').get()).toEqual({ n: 2001 });
    reader.close();
    await expect(checkpointer.checkpointNow()).rejects.toThrow('the checkpoint worker has stopped');
  });

  it('reports a worker that cannot open the file, so the store checkpoints on commit again', async () => {
    const failure = new Promise<string>((resolve) => {
      new SqliteCheckpointer({ path: join(dir, 'no-such-dir', 'x.db'), intervalMs: 1000, busyTimeoutMs: 1000, logger, onFailure: resolve });
    });
    expect(await failure).toMatch(/directory does not exist/);
    expect(warnings).toContain('SQLite checkpoint worker stopped; commits checkpoint the WAL again');
  });
});
