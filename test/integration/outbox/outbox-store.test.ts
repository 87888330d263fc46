import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DurableStore, type OutboxInsert, openDurableStore } from '../../../src/store/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { ledgerRow } from '../store/store-fixtures.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:10.000Z';
const T2 = '2026-01-01T00:00:30.000Z';

const BUDGET = ['budget.threshold', 'budget.exhausted'];
const DELIVERED = { state: 'delivered', attempts: 1, nextAt: T1, at: T1, status: 200, error: null } as const;

const insert = (eventId: string, sink = 'finance', createdAt = T0): OutboxInsert => ({
  id: `${sink}:${eventId}`,
  sink,
  eventId,
  type: 'budget.threshold',
  team: 'team-a',
  payload: { id: eventId, type: 'budget.threshold', time: createdAt, data: { fraction: 0.8 } },
  createdAt,
});

/** SPEC 24 on both databases: the outbox table (migration 9), its lease and the export cursors. */
function describeOutboxStore(name: string, open: () => Promise<DurableStore>, openAgain: () => Promise<DurableStore>): void {
  describe(`outbox store (${name})`, () => {
    let store: DurableStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    it('stores an event once per sink, however often it is published', async () => {
      expect(await store.outbox.insertDeliveries([insert('e1'), insert('e1', 'ops')])).toBe(2);
      expect(await store.outbox.insertDeliveries([insert('e1'), insert('e1', 'ops'), insert('e2')])).toBe(1);
      const rows = await store.outbox.listDeliveries({ sink: 'finance', limit: 10 });
      expect(rows.map((row) => [row.id, row.state, row.attempts])).toEqual([
        ['finance:e2', 'pending', 0],
        ['finance:e1', 'pending', 0],
      ]);
      expect(rows[1]).toEqual({
        id: 'finance:e1',
        sink: 'finance',
        eventId: 'e1',
        type: 'budget.threshold',
        team: 'team-a',
        payload: { id: 'e1', type: 'budget.threshold', time: T0, data: { fraction: 0.8 } },
        state: 'pending',
        attempts: 0,
        nextAt: T0,
        createdAt: T0,
        updatedAt: T0,
        lastStatus: null,
        lastError: null,
      });
      expect(Object.fromEntries(await store.outbox.pendingCounts())).toEqual({ finance: 2, ops: 1 });
    });

    it('hands out due deliveries only, and keeps what an attempt left', async () => {
      await store.outbox.recordResult('finance:e1', { state: 'failed', attempts: 1, nextAt: T2, at: T1, status: 503, error: 'answered 503' });
      await store.outbox.recordResult('ops:e1', { state: 'delivered', attempts: 1, nextAt: T1, at: T1, status: 200, error: null });
      expect((await store.outbox.dueDeliveries(T1, 10)).map((row) => row.id)).toEqual(['finance:e2']);
      expect((await store.outbox.dueDeliveries(T2, 10)).map((row) => row.id)).toEqual(['finance:e2', 'finance:e1']);
      const failed = await store.outbox.getDelivery('finance:e1');
      expect([failed?.state, failed?.attempts, failed?.lastStatus, failed?.lastError, failed?.updatedAt]).toEqual(['failed', 1, 503, 'answered 503', T1]);
      expect((await store.outbox.listDeliveries({ state: 'delivered', limit: 10 })).map((row) => row.id)).toEqual(['ops:e1']);
      expect(Object.fromEntries(await store.outbox.pendingCounts())).toEqual({ finance: 2 });
      expect(await store.outbox.getDelivery('nope')).toBeUndefined();
    });

    it('deletes only finished deliveries older than the retention instant, budget events only past theirs', async () => {
      const expiring: OutboxInsert = { ...insert('k1'), id: 'finance:k1', type: 'key.expiring', payload: { id: 'k1', type: 'key.expiring', time: T0, data: {} } };
      expect(await store.outbox.insertDeliveries([expiring])).toBe(1);
      await store.outbox.recordResult('finance:k1', DELIVERED);
      expect(await store.outbox.deleteFinishedBefore(T1, { types: BUDGET, before: T1 })).toBe(0);
      // Both were delivered at T1: the key notice goes, the budget event (ops:e1) stays until its own instant.
      expect(await store.outbox.deleteFinishedBefore(T2, { types: BUDGET, before: T1 })).toBe(1);
      expect(await store.outbox.getDelivery('finance:k1')).toBeUndefined();
      expect(await store.outbox.deleteFinishedBefore(T2, { types: BUDGET, before: T2 })).toBe(1);
      expect((await store.outbox.listDeliveries({ limit: 10 })).map((row) => [row.id, row.state])).toEqual([
        ['finance:e2', 'pending'],
        ['finance:e1', 'failed'],
      ]);
    });

    it('lets one owner hold the lease until it expires, then another take it', async () => {
      expect(await store.outbox.takeLease('deliverer', 'a', T0, T1)).toBe(true);
      expect(await store.outbox.takeLease('deliverer', 'b', T0, T2)).toBe(false);
      expect(await store.outbox.takeLease('deliverer', 'a', T0, T2)).toBe(true);
      // 'a' stopped renewing (killed): once its expiry has passed, 'b' takes over.
      expect(await store.outbox.takeLease('deliverer', 'b', T1, T2)).toBe(false);
      expect(await store.outbox.takeLease('deliverer', 'b', '2026-01-01T00:00:31.000Z', '2026-01-01T00:00:51.000Z')).toBe(true);
      expect(await store.outbox.takeLease('deliverer', 'a', '2026-01-01T00:00:32.000Z', '2026-01-01T00:00:52.000Z')).toBe(false);
      await store.outbox.releaseLease('deliverer', 'b');
      expect(await store.outbox.takeLease('deliverer', 'a', '2026-01-01T00:00:32.000Z', '2026-01-01T00:00:52.000Z')).toBe(true);
    });

    it('reads the ledger past an export cursor in write order, so a row written late with an old time is not skipped', async () => {
      const rows = ['a', 'b', 'c'].map((id, i) => ledgerRow({ id: `row-${id}`, requestId: `req-${id}`, at: `2026-01-01T00:00:0${i}.000Z` }));
      expect(await store.insertLedgerRows(rows)).toBe(3);
      const later = (): string => new Date(Date.now() + 60_000).toISOString();
      expect(await store.outbox.exportCursor('openmeter')).toBeNull();
      expect((await store.outbox.ledgerAfter(null, later(), 2)).map((row) => row.id)).toEqual(['row-a', 'row-b']);
      const batch = { ...insert('row-a', 'openmeter', T1), type: 'usage.export', team: null, payload: { rows: 2 } };
      expect(await store.outbox.commitExport('openmeter', { at: rows[1]!.at, id: 'row-b' }, batch, DELIVERED, { lease: 'deliverer', owner: 'a' })).toBe(true);
      expect((await store.outbox.getDelivery('openmeter:row-a'))?.state).toBe('delivered');
      // An instance that lost the lease while sending records nothing and moves no cursor.
      const lost = { ...batch, id: 'openmeter:row-c', eventId: 'row-c' };
      expect(await store.outbox.commitExport('openmeter', { at: rows[2]!.at, id: 'row-c' }, lost, DELIVERED, { lease: 'deliverer', owner: 'not-the-holder' })).toBe(false);
      expect(await store.outbox.getDelivery('openmeter:row-c')).toBeUndefined();
      // An instance that rode out a database outage writes a row stamped before everything exported so far.
      expect(await store.insertLedgerRows([ledgerRow({ id: 'row-late', requestId: 'req-late', at: '2025-12-31T23:00:00.000Z' })])).toBe(1);
      const cursor = await store.outbox.exportCursor('openmeter');
      expect((await store.outbox.ledgerAfter(cursor, later(), 10)).map((row) => row.id)).toEqual(['row-c', 'row-late']);
      // A cursor survives a reopen: it is the store's, not the deliverer's.
      expect(await store.outbox.exportCursor('openmeter')).toEqual(cursor);
    });

    it('exports 10,000 rows written by two instances out of time order, each once, none missing', async () => {
      const other = await openAgain();
      try {
        const writers = [store, other];
        const all: string[] = [];
        const exported: string[] = [];
        const later = (): string => new Date(Date.now() + 60_000).toISOString();
        let cursor = await store.outbox.exportCursor('bulk');
        const drain = async (): Promise<void> => {
          for (;;) {
            const rows = await store.outbox.ledgerAfter(cursor, later(), 700);
            if (rows.length === 0) return;
            exported.push(...rows.map((row) => row.id));
            const last = rows.at(-1)!;
            const batch = { ...insert(rows[0]!.id, 'bulk', T1), type: 'usage.export', team: null, payload: { rows: rows.length } };
            await store.outbox.commitExport('bulk', { at: last.at, id: last.id }, batch, { state: 'delivered', attempts: 1, nextAt: T1, at: T1, status: 200, error: null });
            cursor = await store.outbox.exportCursor('bulk');
          }
        };
        for (let batch = 0; batch < 40; batch++) {
          // Each batch's rows are stamped at scattered times, older batches' times included.
          const rows = Array.from({ length: 250 }, (_, i) => {
            const n = batch * 250 + i;
            const id = `bulk-${String(n).padStart(5, '0')}`;
            all.push(id);
            return ledgerRow({ id, requestId: id, at: new Date(Date.UTC(2026, 0, 2) + ((n * 7919) % 10_000) * 1000).toISOString() });
          });
          await writers[batch % 2]!.insertLedgerRows(rows);
          if (batch % 3 === 2) await drain();
        }
        await drain();
        // The four rows of the test above are in this ledger too: a new sink starts from the beginning.
        expect(exported.filter((id) => !id.startsWith('bulk-')).sort()).toEqual(['row-a', 'row-b', 'row-c', 'row-late']);
        const bulk = exported.filter((id) => id.startsWith('bulk-'));
        expect(bulk.length).toBe(10_000);
        expect(new Set(bulk).size).toBe(10_000);
        expect([...bulk].sort()).toEqual([...all].sort());
      } finally {
        await other.close();
      }
    });

    it('stores a large batch in one call (chunked under the databases\' parameter limits)', async () => {
      const many = Array.from({ length: 6000 }, (_, i) => insert(`bulk-${i}`, 'many'));
      expect(await store.outbox.insertDeliveries(many)).toBe(6000);
      expect(await store.outbox.insertDeliveries(many)).toBe(0);
      expect((await store.outbox.pendingCounts()).get('many')).toBe(6000);
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-outbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sqlitePath = join(dir, 'tollgate.db');
describeOutboxStore(
  'sqlite',
  () => openDurableStore({ url: '', path: sqlitePath }),
  () => openDurableStore({ url: '', path: sqlitePath }),
);

let database: TestDatabase | undefined;
describeOutboxStore(
  'postgres',
  async () => {
    database = await createTestDatabase();
    return openDurableStore({ url: database.url, path: '' });
  },
  () => openDurableStore({ url: database!.url, path: '' }),
);
afterAll(async () => {
  await database?.drop();
});
