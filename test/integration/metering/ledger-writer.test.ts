import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DAY_MS } from '../../../src/calendar.js';
import { Ledger, type LedgerEntry } from '../../../src/metering/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { ledgerRow } from '../store/store-fixtures.js';

const NOW = Date.parse('2026-06-15T12:00:00.000Z');

/** A request's entry as the pipeline hands it over: the store fixtures' row without the id the ledger makes. */
function entry(requestId: string, at: number): LedgerEntry {
  const { id: _id, ...rest } = ledgerRow({ requestId, at: new Date(at).toISOString() });
  return rest;
}

/** SPEC 14.1: the ledger writer on a real SQLite file — what it writes, keeps and deletes. */
describe('Ledger', () => {
  let handle: StoreHandle | undefined;
  let ledger: Ledger | undefined;
  afterEach(async () => {
    await ledger?.close(Date.now() + 1_000);
    await handle?.close();
    ledger = handle = undefined;
  });

  async function open(options: { enabled?: boolean; retentionDays?: number } = {}): Promise<{ ledger: Ledger; requestIds: (from: string, to: string) => Promise<string[]> }> {
    handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    ledger = new Ledger(handle, {
      enabled: () => options.enabled ?? true,
      retentionDays: () => options.retentionDays ?? 30,
      onDropped: (row) => expect.fail(`row ${row.requestId} dropped`),
      onDatabaseError: (err) => expect.fail(String(err)),
    });
    const store = handle.require();
    const requestIds = async (from: string, to: string) => (await store.pageLedger({ from, to, limit: 100 })).rows.map((row) => row.requestId).sort();
    return { ledger, requestIds };
  }

  it('writes nothing while metering.ledger.enabled is off', async () => {
    const { ledger, requestIds } = await open({ enabled: false });
    ledger.record(entry('r-1', NOW));
    await ledger.flush();
    expect(ledger.pending).toBe(0);
    expect(await requestIds('2026-06-15', '2026-06-15')).toEqual([]);
  });

  it('deletes the rows older than the retention, to the millisecond, and keeps the rest', async () => {
    const { ledger, requestIds } = await open({ retentionDays: 30 });
    const cutoff = NOW - 30 * DAY_MS;
    for (const [id, at] of [['old', cutoff - 1], ['edge', cutoff], ['new', NOW - DAY_MS]] as const) ledger.record(entry(id, at));
    await ledger.flush();
    expect(await ledger.deleteExpired(NOW)).toBe(1);
    expect(await requestIds('2026-05-01', '2026-06-30')).toEqual(['edge', 'new']);
  });

  it('deletes the rows past the retention by itself once a day, and no longer once closed', async () => {
    // Only setInterval is faked: the database, its promises and Date stay real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { ledger, requestIds } = await open({ retentionDays: 30 });
      const now = Date.now();
      for (const [id, at] of [['old', now - 31 * DAY_MS], ['new', now - DAY_MS]] as const) ledger.record(entry(id, at));
      await ledger.flush();
      const all = (): Promise<string[]> => requestIds(new Date(now - 40 * DAY_MS).toISOString().slice(0, 10), new Date(now).toISOString().slice(0, 10));
      vi.advanceTimersByTime(DAY_MS - 1);
      expect(await all()).toEqual(['new', 'old']);
      vi.advanceTimersByTime(1);
      await expect.poll(all).toEqual(['new']);
      ledger.record(entry('old-again', now - 31 * DAY_MS));
      await ledger.close(Date.now() + 1_000);
      vi.advanceTimersByTime(DAY_MS);
      expect(await all()).toEqual(['new', 'old-again']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes what it holds when it closes', async () => {
    const { ledger, requestIds } = await open();
    ledger.record(entry('last', NOW));
    await ledger.close(Date.now() + 5_000);
    expect(await requestIds('2026-06-15', '2026-06-15')).toEqual(['last']);
  });

  it('journals each row before it is written: a later ledger on the same journal writes what an earlier one never could, once', async () => {
    const journal = `${tempDatabasePath()}.ledger-journal/worker-0`;
    // The first ledger's database never opens (as a worker killed before its batch reached it).
    const away = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    const first = new Ledger(away, { enabled: () => true, retentionDays: () => 30, journal, onDropped: () => {}, onDatabaseError: () => {}, onJournalError: (err) => expect.fail(String(err)) });
    for (const id of ['j-1', 'j-2', 'j-3']) first.record(entry(id, NOW));
    expect(first.pending).toBe(3);
    await first.close(Date.now());
    expect(readdirSync(dirname(journal))).toEqual(['worker-0.1.jsonl']);

    handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    ledger = new Ledger(handle, { enabled: () => true, retentionDays: () => 30, journal, onDropped: (row) => expect.fail(`row ${row.requestId} dropped`), onDatabaseError: (err) => expect.fail(String(err)), onJournalError: (err) => expect.fail(String(err)) });
    ledger.record(entry('j-4', NOW));
    await ledger.flush();
    const rows = (await handle.require().pageLedger({ from: '2026-06-15', to: '2026-06-15', limit: 100 })).rows;
    expect(rows.map((row) => row.requestId).sort()).toEqual(['j-1', 'j-2', 'j-3', 'j-4']);
    // Written: the replayed segment is gone; only the open one is left, and closing deletes it.
    expect(readdirSync(dirname(journal))).toEqual(['worker-0.3.jsonl']);
    await ledger.close(Date.now() + 1_000);
    ledger = undefined;
    expect(readdirSync(dirname(journal))).toEqual([]);
  });
});
