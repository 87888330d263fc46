import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDurableStore, type DurableStore } from '../../../src/store/index.js';
import { createTestDatabase, terminateBackends, type TestDatabase } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/wait.js';
import { ChangeRecorder, digest, keyRecord, resource } from './store-fixtures.js';

let database: TestDatabase;
let a: DurableStore;
let b: DurableStore;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

beforeEach(async () => {
  a = await openDurableStore({ url: database.url, path: '' }, { applicationName: 'store-a' });
  b = await openDurableStore({ url: database.url, path: '' }, { applicationName: 'store-b' });
  await database.query('TRUNCATE api_keys, key_secrets, resources, audit_log, ledger, ledger_daily');
});

afterEach(async () => {
  await Promise.all([a.close(), b.close()]);
});

const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

describe('two PostgreSQL store instances', () => {
  it('carries a change on A to the listeners of B well within a second, and to A once', async () => {
    const onA = new ChangeRecorder(a);
    const onB = new ChangeRecorder(b);
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await a.createKey(keyRecord({ id: `key-${i}` }), digest(`s${i}`));
      await onB.waitFor(i + 1, 1000);
      delays.push(performance.now() - started);
    }
    console.log(`change feed A→B (write + NOTIFY + delivery), 20 writes: median ${median(delays).toFixed(1)} ms, max ${Math.max(...delays).toFixed(1)} ms`);
    expect(Math.max(...delays)).toBeLessThan(1000);
    expect(onB.changes).toEqual(Array.from({ length: 20 }, (_, i) => ({ kind: 'key', id: `key-${i}` })));
    // B's write reaches A after A's own echoes (one connection, commit order): A has heard each of its writes once.
    await b.recordResource(resource());
    await onA.waitFor(21);
    expect(onA.changes).toEqual([...Array.from({ length: 20 }, (_, i) => ({ kind: 'key', id: `key-${i}` })), { kind: 'resource', id: 'model-1', resourceKind: 'model' }]);
  });

  it('lets the first owner win when both instances record the same resource at once', async () => {
    const onA = new ChangeRecorder(a);
    const onB = new ChangeRecorder(b);
    const rounds = 25;
    for (let i = 0; i < rounds; i++) {
      const [fromA, fromB] = await Promise.all([
        a.recordResource(resource({ id: `m-${i}`, team: 'team-a' })),
        b.recordResource(resource({ id: `m-${i}`, team: 'team-b' })),
      ]);
      expect(fromA).toEqual(fromB);
      expect(await a.getResource('model', `m-${i}`)).toEqual(fromA);
    }
    // One change per resource on each side, whichever instance won.
    await a.recordResource(resource({ id: 'sentinel-a' }));
    await b.recordResource(resource({ id: 'sentinel-b' }));
    await Promise.all([onA.waitFor(rounds + 2), onB.waitFor(rounds + 2)]);
    for (const recorder of [onA, onB]) {
      const ids = recorder.changes.map((c) => (c.kind === 'resource' ? c.id : c.kind));
      expect(ids.filter((id) => id.startsWith('m-')).sort()).toEqual(Array.from({ length: rounds }, (_, i) => `m-${i}`).sort());
      expect(ids).toHaveLength(rounds + 2);
    }
  });

  it('asks for a resync after its LISTEN connection is killed, and hears changes again', async () => {
    const onB = new ChangeRecorder(b);
    expect(await terminateBackends(database, 'store-b-listen')).toBe(1);
    await onB.waitFor(1, 5000);
    expect(onB.changes).toEqual([{ kind: 'resync' }]);
    await eventually(async () => (await database.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'store-b-listen'")).length === 1);
    await a.createKey(keyRecord(), digest('s1'));
    await onB.waitFor(2);
    expect(onB.changes).toEqual([{ kind: 'resync' }, { kind: 'key', id: 'key-1' }]);
    // The pool was untouched: B still answers.
    expect((await b.getKey('key-1'))?.id).toBe('key-1');
  });

  it('keeps one current secret when both instances rotate the same key at once', async () => {
    await a.createKey(keyRecord(), digest('s0'));
    const until = new Date(Date.now() + 3_600_000).toISOString();
    await Promise.all([a.rotateKey('key-1', digest('from-a'), until), b.rotateKey('key-1', digest('from-b'), until)]);
    const secrets = (await a.loadKey('key-1'))?.secrets ?? [];
    expect(secrets.filter((s) => s.validUntil === null)).toHaveLength(1);
    expect(secrets.map((s) => s.sha256).sort()).toEqual([digest('s0'), digest('from-a'), digest('from-b')].sort());
  });
});
