import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsageStore, type UsageRecord, type UsageStore } from '../../../src/metering/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { BASE_MODEL, buildUsageStore, MODEL, QUERIES, TRAFFIC, usage, usageConfig } from '../../unit/metering/usage-fixtures.js';

let redis: TestRedis;
let prefixes = 0;
const opened: UsageStore[] = [];

/** A redis store on the test server, under a key prefix of its own unless one is given. */
function redisStore(prefix = `t${++prefixes}:`, events: Parameters<typeof buildUsageStore>[1] = { onStoreError: () => undefined }): UsageStore {
  const store = buildUsageStore(usageConfig({ url: redis.url, keyPrefix: prefix }), events);
  opened.push(store);
  return store;
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis.stop();
});

describe('usage store: memory and redis', () => {
  it('answer identical rows for the same records, for every groupBy and filter', async () => {
    const memory = buildUsageStore(usageConfig(), { onStoreError: () => undefined });
    const shared = redisStore();
    for (const r of TRAFFIC) {
      memory.record(r);
      shared.record(r);
    }
    await shared.flush();
    for (const q of QUERIES) expect(await shared.query(q), JSON.stringify(q)).toEqual(await memory.query(q));
  });

  it('sums per team and project, sorted, with exact totals', async () => {
    const store = redisStore();
    for (const r of TRAFFIC) store.record(r);
    await store.flush();
    expect(await store.query({ from: '2025-06-01', to: '2025-06-03' })).toEqual([
      { team: 'team-a', project: 'dev', requests: 1, prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 },
      { team: 'team-a', project: 'prod', requests: 5, prompt_tokens: 1460, completion_tokens: 2126, total_tokens: 3586 },
      { team: 'team-b', project: 'research', requests: 2, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
    ]);
  });

  it('groups by key, by day and by model', async () => {
    const store = redisStore();
    for (const r of TRAFFIC) store.record(r);
    await store.flush();
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01', team: 'team-a', project: 'prod', groupBy: 'key' })).toEqual([
      { team: 'team-a', project: 'prod', key: 'ci-bot', requests: 3, prompt_tokens: 450, completion_tokens: 126, total_tokens: 576 },
      { team: 'team-a', project: 'prod', key: 'jwt:alice@acme.io', requests: 1, prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 },
    ]);
    expect(await store.query({ from: '2025-05-31', to: '2025-06-03', project: 'research', groupBy: 'day' })).toEqual([
      { team: 'team-b', project: 'research', day: '2025-06-02', requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
      { team: 'team-b', project: 'research', day: '2025-06-03', requests: 1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    ]);
    expect(await store.query({ from: '2025-05-31', to: '2025-06-02', team: 'team-a', project: 'prod', groupBy: 'model' })).toEqual([
      { team: 'team-a', project: 'prod', model: BASE_MODEL, requests: 2, prompt_tokens: 1400, completion_tokens: 2120, total_tokens: 3520 },
      { team: 'team-a', project: 'prod', model: MODEL, requests: 4, prompt_tokens: 65, completion_tokens: 11, total_tokens: 76 },
    ]);
  });

  it('adds the records of two instances sharing one Redis into the same totals', async () => {
    const a = redisStore('shared-totals:');
    const b = redisStore('shared-totals:');
    for (let i = 0; i < 50; i++) (i % 2 === 0 ? a : b).record(usage({}));
    await Promise.all([a.flush(), b.flush()]);
    const expected = [{ team: 'team-a', project: 'prod', requests: 50, prompt_tokens: 1250, completion_tokens: 150, total_tokens: 1400 }];
    expect(await a.query({ from: '2025-06-01', to: '2025-06-01' })).toEqual(expected);
    expect(await b.query({ from: '2025-06-01', to: '2025-06-01' })).toEqual(expected);
  });

  it('lets a query on one instance see what that instance recorded a moment ago', async () => {
    const store = redisStore();
    store.record(usage({}));
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01' })).toEqual([
      { team: 'team-a', project: 'prod', requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
    ]);
  });

  it('keeps the documented key layout: a day-tagged set of pairs and one hash per pair', async () => {
    const store = redisStore('layout:');
    store.record(usage({}));
    await store.flush();
    const raw = new Redis(redis.url);
    try {
      expect((await raw.keys('layout:*')).sort()).toEqual(['layout:usage:{2025-06-01}:projects', 'layout:usage:{2025-06-01}:team-a/prod']);
      expect(await raw.smembers('layout:usage:{2025-06-01}:projects')).toEqual(['team-a/prod']);
      expect(await raw.hgetall('layout:usage:{2025-06-01}:team-a/prod')).toEqual({
        [`requests ["${MODEL}","ci-bot"]`]: '1',
        [`prompt_tokens ["${MODEL}","ci-bot"]`]: '25',
        [`completion_tokens ["${MODEL}","ci-bot"]`]: '3',
        [`total_tokens ["${MODEL}","ci-bot"]`]: '28',
      });
    } finally {
      raw.disconnect();
    }
  });

  it('writes what was recorded when closed right after start-up, while still connecting', async () => {
    const store = buildUsageStore(usageConfig({ url: redis.url, keyPrefix: 'early:' }), { onStoreError: () => undefined });
    store.record(usage({}));
    await store.close();
    const raw = new Redis(redis.url);
    try {
      expect(await raw.hget('early:usage:{2025-06-01}:team-a/prod', `total_tokens ["${MODEL}","ci-bot"]`)).toBe('28');
    } finally {
      raw.disconnect();
    }
  });

  it('uses a client passed in and leaves it open on close', async () => {
    const client = new Redis(redis.url, { enableOfflineQueue: false });
    await new Promise<void>((resolve) => client.once('ready', () => resolve()));
    const store = createUsageStore(usageConfig({ keyPrefix: 'passed:' }), client, { onStoreError: () => undefined });
    store.record(usage({ keyId: 'notebook' }));
    await store.flush();
    await store.close();
    expect(client.status).toBe('ready');
    expect(await client.hget('passed:usage:{2025-06-01}:team-a/prod', `requests ["${MODEL}","notebook"]`)).toBe('1');
    client.disconnect();
  });
});

describe('usage store: Redis outage', () => {
  let outage: TestRedis;
  beforeAll(async () => {
    outage = await startRedis();
  });
  afterAll(async () => {
    await outage.stop();
  });

  /** A store on the outage server, connected (one write went through) before the test kills it. */
  async function connectedStore(events: { onStoreError(): void; onUsageDropped?(r: UsageRecord): void }, maxPendingCells?: number): Promise<UsageStore> {
    const store = buildUsageStore(usageConfig({ url: outage.url, keyPrefix: `o${++prefixes}:` }), events, {
      batchDelayMs: 1,
      ...(maxPendingCells === undefined ? {} : { maxPendingCells }),
    });
    opened.push(store);
    store.record(usage({ day: '2000-01-01' }));
    await store.flush();
    return store;
  }

  it('keeps counts recorded while Redis is down and writes them after it restarts', async () => {
    let storeErrors = 0;
    let firstFailure!: () => void;
    const failed = new Promise<void>((resolve) => (firstFailure = resolve));
    const store = await connectedStore({
      onStoreError: () => {
        storeErrors++;
        firstFailure();
      },
    });
    await outage.kill();
    expect(() => {
      store.record(usage({}));
      store.record(usage({ model: BASE_MODEL }));
      store.record(usage({}));
    }).not.toThrow();
    const flushed = store.flush();
    await failed;
    await outage.restart();
    await flushed;
    expect(storeErrors).toBeGreaterThan(0);
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01', groupBy: 'model' })).toEqual([
      { team: 'team-a', project: 'prod', model: BASE_MODEL, requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
      { team: 'team-a', project: 'prod', model: MODEL, requests: 2, prompt_tokens: 50, completion_tokens: 6, total_tokens: 56 },
    ]);
  });

  it('drops the oldest buffered cell when the buffer is full, and reports it', async () => {
    const dropped: UsageRecord[] = [];
    const store = await connectedStore({ onStoreError: () => undefined, onUsageDropped: (r) => dropped.push(r) }, 2);
    await outage.kill();
    store.record(usage({ keyId: 'oldest' }));
    store.record(usage({ keyId: 'middle' }));
    store.record(usage({ keyId: 'middle' }));
    store.record(usage({ keyId: 'newest' }));
    expect(dropped).toEqual([usage({ keyId: 'oldest' })]);
    await outage.restart();
    await store.flush();
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01', groupBy: 'key' })).toEqual([
      { team: 'team-a', project: 'prod', key: 'middle', requests: 2, prompt_tokens: 50, completion_tokens: 6, total_tokens: 56 },
      { team: 'team-a', project: 'prod', key: 'newest', requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
    ]);
  });

  it('ends a pending flush on close while Redis is down, reporting the counts it gives up', async () => {
    const dropped: UsageRecord[] = [];
    const store = await connectedStore({ onStoreError: () => undefined, onUsageDropped: (r) => dropped.push(r) });
    await outage.kill();
    try {
      store.record(usage({ keyId: 'late' }));
      const flushed = store.flush();
      await store.close();
      await flushed;
      expect(dropped).toEqual([usage({ keyId: 'late' })]);
    } finally {
      await outage.restart();
    }
  });

  it('answers 503 store_unavailable to a query while Redis is down', async () => {
    let storeErrors = 0;
    const store = await connectedStore({ onStoreError: () => storeErrors++ });
    await outage.kill();
    try {
      await expect(store.query({ from: '2025-06-01', to: '2025-06-01' })).rejects.toMatchObject({
        status: 503,
        code: 'store_unavailable',
        message: 'The usage store (Redis) cannot be read right now; try again shortly.',
      });
      expect(storeErrors).toBe(1);
    } finally {
      await outage.restart();
    }
  });
});
