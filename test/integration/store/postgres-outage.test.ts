import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/metering/index.js';
import { DatabaseUnavailableError, openDurableStore, StoreHandle, type DurableStore } from '../../../src/store/index.js';
import { freePort } from '../../helpers/ports.js';
import { createTestDatabase, terminateBackends, relayTo, type TestDatabase } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/wait.js';
import { ChangeRecorder, digest, keyRecord, ledgerRow, rejection } from './store-fixtures.js';
import type { TcpProxy } from '../../helpers/tcp-proxy.js';

let database: TestDatabase;
let proxy: TcpProxy;
const open: DurableStore[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ relay: proxy } = await relayTo(database));
});

afterEach(async () => {
  await proxy.restore();
  await Promise.all(open.splice(0).map((s) => s.close()));
  await database.query(`DO $$ BEGIN IF to_regclass('api_keys') IS NOT NULL THEN TRUNCATE api_keys, key_secrets; END IF; END $$`);
});

afterAll(async () => {
  await proxy.close();
  await database.drop();
});

/** A store that reaches PostgreSQL through the breakable proxy (or directly). */
async function openStore(timeoutMs: number, via: 'proxy' | 'direct' = 'proxy', applicationName = 'store-outage'): Promise<DurableStore> {
  const url = new URL(database.url);
  if (via === 'proxy') url.port = String(proxy.port);
  const store = await openDurableStore({ url: url.toString(), path: '', timeoutMs }, { applicationName, listenCheckIntervalMs: 200 });
  open.push(store);
  return store;
}

/** How long a promise took to settle, and its rejection. */
async function timedRejection(promise: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = Date.now();
  const error = await rejection(promise);
  return { error, ms: Date.now() - started };
}

const answers = (store: DurableStore) => async (): Promise<boolean> => (await store.getKey('key-1').catch(() => 'down')) !== 'down';

describe('PostgreSQL unavailable', () => {
  it('refuses to open on a closed port with DatabaseUnavailableError, within the bound', async () => {
    const port = await freePort();
    const { error, ms } = await timedRejection(openDurableStore({ url: `postgres://postgres@127.0.0.1:${port}/none`, path: '', timeoutMs: 300 }));
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(error.message).toMatch(/^PostgreSQL is unavailable: .*ECONNREFUSED/);
    expect(ms).toBeLessThan(1000);
  });

  it('refuses to open through a black hole within the bound', async () => {
    proxy.stall();
    const { error, ms } = await timedRejection(openStore(300));
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(1000);
  });

  it('rejects calls within the bound while the network drops everything, and recovers by itself', async () => {
    const store = await openStore(500);
    await store.createKey(keyRecord(), digest('s1'));
    proxy.stall();
    const read = await timedRejection(store.getKey('key-1'));
    expect(read.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(read.error.message).toBe('database did not answer within 500 ms');
    expect(read.ms).toBeGreaterThanOrEqual(490);
    expect(read.ms).toBeLessThan(900);
    // The request path may ask for a tighter bound.
    const tight = await timedRejection(store.getResource('model', 'm1', { timeoutMs: 100 }));
    expect(tight.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(tight.ms).toBeLessThan(400);
    const write = await timedRejection(store.updateKey('key-1', { disabled: true }));
    expect(write.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(write.ms).toBeLessThan(900);
    expect(await store.ping()).toBe(false);
    await proxy.restore();
    await eventually(answers(store), 10_000);
    expect(await store.getKey('key-1')).toEqual(keyRecord());
  });

  it('notices a LISTEN connection gone silent (no error, no close), and resyncs once the network is back', async () => {
    const warnings: string[] = [];
    const url = new URL(database.url);
    url.port = String(proxy.port);
    const logger = { warn: (_obj: object, msg: string) => void warnings.push(msg) };
    const store = await openDurableStore({ url: url.toString(), path: '', timeoutMs: 300 }, { logger, listenCheckIntervalMs: 200 });
    open.push(store);
    const changes = new ChangeRecorder(store);
    proxy.stall();
    // Only the probe (every 200 ms, 300 ms to answer) can tell: the socket itself stays open.
    await eventually(async () => warnings.includes('store change feed lost its PostgreSQL connection; reconnecting'), 5000);
    expect(changes.changes).toEqual([]);
    await proxy.restore();
    await changes.waitFor(1, 10_000);
    expect(changes.changes).toEqual([{ kind: 'resync' }]);
    expect(warnings.at(-1)).toBe('store change feed listening again; caches resync');
  });

  it('closes within the bound while the network drops everything', async () => {
    const store = await openStore(300);
    await store.ping();
    proxy.stall();
    const started = Date.now();
    await store.close();
    expect(Date.now() - started).toBeLessThan(600);
  });

  it('rejects calls at once while the server is gone, resyncs its change feed and recovers once it is back', async () => {
    const store = await openStore(500);
    const changes = new ChangeRecorder(store);
    await proxy.cut();
    const { error, ms } = await timedRejection(store.listKeys());
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(ms).toBeLessThan(600);
    expect(await rejection(store.insertLedgerRows([]).then(() => store.loadKeys()))).toBeInstanceOf(DatabaseUnavailableError);
    await proxy.restore();
    await changes.waitFor(1, 10_000);
    expect(changes.changes).toEqual([{ kind: 'resync' }]);
    await eventually(answers(store), 10_000);
    expect(await store.listKeys()).toEqual([]);
  });

  it('rejects a call whose backend is terminated mid-statement, without crashing, and serves the next one', async () => {
    const store = await openStore(5000, 'direct', 'store-terminated');
    await store.createKey(keyRecord(), digest('s1'));
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM api_keys WHERE id = 'key-1' FOR UPDATE");
      const blocked = rejection(store.updateKey('key-1', { disabled: true }));
      await eventually(async () => (await database.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'store-terminated' AND wait_event_type = 'Lock'")).length === 1);
      expect(await terminateBackends(database, 'store-terminated')).toBeGreaterThanOrEqual(1);
      const error = await blocked;
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(error.message).toBe('PostgreSQL is unavailable: terminating connection due to administrator command');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(await store.updateKey('key-1', { description: 'after' })).toEqual(keyRecord({ description: 'after' }));
  });

  it('gives up a statement stuck behind a lock after timeoutMs, and leaves nothing half-written', async () => {
    const store = await openStore(300, 'direct', 'store-locked');
    await store.createKey(keyRecord(), digest('s1'));
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM api_keys WHERE id = 'key-1' FOR UPDATE");
      const { error, ms } = await timedRejection(store.rotateKey('key-1', digest('s2'), null));
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(800);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect((await store.loadKey('key-1'))?.secrets).toEqual([{ sha256: digest('s1'), validUntil: null }]);
  });
});

describe('a ledger batch whose COMMIT answer is lost', () => {
  it('is written again on the retry and holds each row exactly once, identical requests included', async () => {
    const url = new URL(database.url);
    url.port = String(proxy.port);
    const handle = new StoreHandle({ url: url.toString(), path: '', timeoutMs: 500 }, { logger: { warn: () => undefined } });
    expect(await handle.open()).toBe(true);
    const errors: string[] = [];
    const dropped: unknown[] = [];
    const ledger = new Ledger(handle, {
      enabled: () => true,
      retentionDays: () => 400,
      onDropped: (row) => void dropped.push(row),
      onDatabaseError: (err) => void errors.push((err as Error).message),
    });
    try {
      // The server commits the batch; the gateway never hears it did, gives up after 500 ms and writes the batch again.
      proxy.loseRepliesAfter('commit');
      const { id: _unused, ...twin } = ledgerRow({ requestId: 'twin' });
      for (let i = 0; i < 3; i++) ledger.record(twin);
      ledger.record({ ...twin, requestId: 'other' });
      await ledger.flush(Date.now() + 10_000);
      expect(errors).toEqual(['database did not answer within 500 ms']);
      expect(dropped).toEqual([]);
      expect(await database.query('SELECT request_id, count(*)::int AS rows FROM ledger GROUP BY request_id ORDER BY request_id')).toEqual([
        { request_id: 'other', rows: 1 },
        { request_id: 'twin', rows: 3 },
      ]);
    } finally {
      await ledger.close(Date.now() + 1000);
      await handle.close();
    }
  });
});
