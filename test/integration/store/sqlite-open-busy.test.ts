import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDurableStore } from '../../../src/store/index.js';
import { ledgerRow } from './store-fixtures.js';

// Workers started together on one SQLite file migrate one after the other. A worker that waited
// for the other's migration only as long as a request may wait (the store's timeoutMs) started
// without its store and answered admin writes 503 (seen under CI load in workers.test.ts).

const dir = mkdtempSync(join(tmpdir(), 'tollgate-open-busy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Another process holding the file's write lock (BEGIN IMMEDIATE) for `holdMs`, as a sibling
 * worker's migration does. Resolves once the lock is held; `released` once it committed.
 */
async function holdWriteLock(path: string, holdMs: number): Promise<{ released: Promise<unknown> }> {
  const script = `
    const Sqlite = require('better-sqlite3');
    const file = new Sqlite(process.argv[1]);
    file.pragma('journal_mode = WAL');
    file.exec('begin immediate');
    process.stdout.write('locked\\n');
    setTimeout(() => { file.exec('commit'); file.close(); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ['-e', script, path, String(holdMs)], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  const released = once(child, 'exit');
  await once(child.stdout, 'data');
  return { released };
}

describe('opening a SQLite file another connection is writing to', () => {
  it('waits for the other writer past timeoutMs to migrate, then opens a usable store', async () => {
    const path = join(dir, 'shared.db');
    const holder = await holdWriteLock(path, 1500);
    const store = await openDurableStore({ url: '', path, timeoutMs: 200 });
    try {
      expect(await store.insertLedgerRows([ledgerRow({ id: 'after-wait' })])).toBe(1);
    } finally {
      await store.close();
    }
    await holder.released;
  });

  it('keeps timeoutMs for the requests once open: a write blocked longer than that fails', async () => {
    const path = join(dir, 'request-timeout.db');
    const first = await openDurableStore({ url: '', path, timeoutMs: 200 });
    await first.close();
    const store = await openDurableStore({ url: '', path, timeoutMs: 200 });
    const holder = await holdWriteLock(path, 1500);
    try {
      await expect(store.insertLedgerRows([ledgerRow({ id: 'blocked' })])).rejects.toThrow(/unavailable|busy|locked/i);
    } finally {
      await holder.released;
      await store.close();
    }
  });
});
