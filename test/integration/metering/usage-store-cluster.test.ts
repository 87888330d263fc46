import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageStore } from '../../../src/metering/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { buildUsageStore, QUERIES, TRAFFIC, usageConfig } from '../../unit/metering/usage-fixtures.js';

const run = promisify(execFile);
let nodes: TestRedis[] = [];
let store: UsageStore;

/** Resolves once every node reports cluster_state:ok (polled: the cluster bus has no event to await). */
async function clusterReady(): Promise<void> {
  const clients = nodes.map((n) => new Redis(n.url));
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      const states = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO') as Promise<string>));
      if (states.every((info) => info.includes('cluster_state:ok'))) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the test cluster did not reach cluster_state:ok');
  } finally {
    for (const c of clients) c.disconnect();
  }
}

beforeAll(async () => {
  nodes = await Promise.all([0, 1, 2].map(() => startRedis(['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'])));
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
  await clusterReady();
  store = buildUsageStore(usageConfig({ cluster: nodes.map((n) => n.url), keyPrefix: 'tollgate:' }), { onStoreError: () => undefined });
});

afterAll(async () => {
  await store?.close();
  await Promise.all(nodes.map((n) => n.stop()));
});

describe('usage store on Redis Cluster', () => {
  it('writes each day as one single-slot MULTI and answers like the memory store', async () => {
    const memory = buildUsageStore(usageConfig(), { onStoreError: () => undefined });
    for (const r of TRAFFIC) {
      memory.record(r);
      store.record(r);
    }
    await store.flush();
    for (const q of QUERIES) expect(await store.query(q), JSON.stringify(q)).toEqual(await memory.query(q));
  });
});
