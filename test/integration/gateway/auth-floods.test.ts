import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { loadConfig } from '../../../src/config/index.js';
import { metricValue, startGateway, startStack, tempDatabasePath, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';

/**
 * SPEC 15 "Floods of bad credentials": past `auth.failureLimit.perMinute` 401s from one client
 * address, that address gets 429 `too_many_auth_failures` for `blockSeconds` without any key
 * check, on /v1 and /admin alike; other addresses are unaffected.
 */

type Stack = Awaited<ReturnType<typeof startStack>>;

const V1 = '/v1/models';
const ADMIN = '/admin/keys';
const BAD = bearer('tg-guessed-key-000000000000000');
const unauthorized = { error: { message: 'Incorrect API key provided.', type: 'authentication_error', param: null, code: 'invalid_api_key' } };
const throttled = (perMinute: number, retry: string) => ({
  error: {
    message: `Too many failed authentication attempts from this address: limit ${perMinute} per minute, retry in ${retry}.`,
    type: 'rate_limit_error',
    param: null,
    code: 'too_many_auth_failures',
  },
});

/** `count` requests with an unknown key from `address` (via X-Forwarded-For), each answered 401. */
async function failFrom(url: string, path: string, address: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await request(url).get(path).set('x-forwarded-for', address).set('authorization', BAD);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized);
  }
}

const THROTTLED_SERIES = 'tollgate_auth_failures_total{reason="throttled"}';

describe('bad-credential floods, one instance (memory)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { trustProxy: true } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers the 31st request from an address with 30 failures 429 too_many_auth_failures, even with a valid key, and serves other addresses', async () => {
    const { url } = stack.gw;
    expect(await metricValue(url, THROTTLED_SERIES)).toBe(0);
    await failFrom(url, V1, '203.0.113.7', 30);
    const forwardedBefore = stack.inference.requests.length;

    const refused = await request(url).get(V1).set('x-forwarded-for', '203.0.113.7').set('authorization', bearer(KEYS.teamA));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['www-authenticate']).toBeUndefined();
    expect(refused.headers['content-type']).toBe('application/json');
    expect(refused.body).toEqual(throttled(30, '1m0s'));
    expect(stack.inference.requests).toHaveLength(forwardedBefore);

    const other = await request(url).get(V1).set('x-forwarded-for', '203.0.113.8').set('authorization', bearer(KEYS.teamA));
    expect(other.status).toBe(200);
    expect(await metricValue(url, THROTTLED_SERIES)).toBe(1);
  });

  it('throttles /admin the same way: 30 bad admin keys, then 429 for the admin key from that address only', async () => {
    const { url } = stack.gw;
    await failFrom(url, ADMIN, '198.51.100.20', 30);
    const refused = await request(url).get(ADMIN).set('x-forwarded-for', '198.51.100.20').set('authorization', bearer(KEYS.admin));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body).toEqual(throttled(30, '1m0s'));
    const other = await request(url).get(ADMIN).set('x-forwarded-for', '198.51.100.21').set('authorization', bearer(KEYS.admin));
    expect(other.status).toBe(200);
  });

  it('counts failures on /v1 and /admin together for one address', async () => {
    const { url } = stack.gw;
    await failFrom(url, V1, '192.0.2.50', 15);
    await failFrom(url, ADMIN, '192.0.2.50', 15);
    for (const path of [V1, ADMIN]) {
      const res = await request(url).get(path).set('x-forwarded-for', '192.0.2.50').set('authorization', BAD);
      expect(res.status).toBe(429);
      expect(res.body).toEqual(throttled(30, '1m0s'));
    }
  });
});

describe('bad-credential floods without trustProxy', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ auth: { failureLimit: { perMinute: 2, blockSeconds: 30 } } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('ignores X-Forwarded-For: a client cannot spread its failures over made-up addresses', async () => {
    const { url } = stack.gw;
    await failFrom(url, V1, '203.0.113.1', 1);
    await failFrom(url, V1, '203.0.113.2', 1);
    const res = await request(url).get(V1).set('x-forwarded-for', '203.0.113.3').set('authorization', bearer(KEYS.teamA));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body).toEqual(throttled(2, '30s'));
  });
});

describe('bad-credential floods with auth.failureLimit: false', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { trustProxy: true }, auth: { failureLimit: false } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('never throttles', async () => {
    const { url } = stack.gw;
    await failFrom(url, V1, '203.0.113.9', 31);
    const res = await request(url).get(V1).set('x-forwarded-for', '203.0.113.9').set('authorization', bearer(KEYS.teamA));
    expect(res.status).toBe(200);
  });
});

describe('bad-credential floods after a config reload', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let write: (failureLimit: string) => void;
  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    const databasePath = tempDatabasePath();
    const yaml = (failureLimit: string): string => `
server: { host: 127.0.0.1, port: 0, trustProxy: true }
upstreams: { service: { url: "${service.url}" }, inference: { url: "${inference.url}" } }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)}, admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }, failureLimit: ${failureLimit} }
database: { path: "${databasePath}" }
logging: { level: silent }
`;
    const path = writeTempConfig(yaml('{ perMinute: 5, blockSeconds: 60 }'));
    write = (failureLimit) => writeFileSync(path, yaml(failureLimit));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const reload = async (): Promise<void> => {
    const res = await request(gw.url).post('/admin/config/reload').set('x-forwarded-for', '192.0.2.250').set('authorization', bearer(KEYS.admin));
    expect(res.status).toBe(200);
  };
  const valid = () => request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.90').set('authorization', bearer(KEYS.teamA));

  it('applies a new perMinute and blockSeconds to the next request, keeping the counts so far, and turns off with false', async () => {
    await failFrom(gw.url, V1, '203.0.113.90', 2);
    expect((await valid()).status).toBe(200);

    write('{ perMinute: 2, blockSeconds: 30 }');
    await reload();
    // Its two failures so far reach the new limit: refused until their minute ends.
    const refused = await valid();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body).toEqual(throttled(2, '1m0s'));
    // An address that reaches it now is blocked for the new blockSeconds.
    await failFrom(gw.url, V1, '203.0.113.91', 2);
    const blocked = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.91').set('authorization', bearer(KEYS.teamA));
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe('30');
    expect(blocked.body).toEqual(throttled(2, '30s'));

    write('false');
    await reload();
    expect((await valid()).status).toBe(200);
  });
});

/** The shared store two instances use: one redis-server, or a 3-master Redis Cluster. */
const SHARED_STORES: Record<string, () => Promise<{ redis: Record<string, unknown>; stop(): Promise<void> }>> = {
  'one Redis': async () => {
    const redis = await startRedis();
    return { redis: { url: redis.url }, stop: () => redis.stop() };
  },
  'a 3-master Redis Cluster': async () => {
    const cluster = await startRedisCluster();
    return { redis: { cluster: cluster.nodes }, stop: () => cluster.stop() };
  },
};

describe.each(Object.keys(SHARED_STORES))('bad-credential floods across two instances sharing %s', (storeName) => {
  let store: Awaited<ReturnType<(typeof SHARED_STORES)[string]>>;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateways: RunningGateway[];
  beforeAll(async () => {
    store = await SHARED_STORES[storeName]!();
    service = await startTrainingService();
    inference = await startInferenceHost();
    const config = () => testConfig({ service: service.url, inference: inference.url }, { server: { trustProxy: true }, redis: store.redis });
    gateways = [await startGateway(config()), await startGateway(config())];
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await Promise.all([service.close(), inference.close(), store.stop()]);
  });

  it('counts exactly between them: 15 failures on each, then the next on either is 429', async () => {
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    await failFrom(a.url, V1, '203.0.113.40', 15);
    await failFrom(b.url, ADMIN, '203.0.113.40', 15);
    for (const gw of [a, b]) {
      const res = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.40').set('authorization', bearer(KEYS.teamA));
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.body).toEqual(throttled(30, '1m0s'));
      expect(await metricValue(gw.url, THROTTLED_SERIES)).toBe(1);
    }
    const other = await request(b.url).get(V1).set('x-forwarded-for', '203.0.113.41').set('authorization', bearer(KEYS.teamA));
    expect(other.status).toBe(200);
  });
});

describe('bad-credential floods while Redis is away', () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway | undefined;
  beforeAll(async () => {
    // DEBUG SLEEP stalls Redis with its connections up: the case a per-command timer must catch.
    redis = await startRedis(['--enable-debug-command', 'yes']);
    service = await startTrainingService();
    inference = await startInferenceHost();
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });
  afterAll(async () => {
    await Promise.all([service.close(), inference.close(), redis.stop()]);
  });

  const start = async (commandTimeoutMs: number): Promise<RunningGateway> =>
    startGateway(
      testConfig(
        { service: service.url, inference: inference.url },
        { server: { trustProxy: true }, redis: { url: redis.url, commandTimeoutMs }, auth: { failureLimit: { perMinute: 3, blockSeconds: 60 } } },
      ),
    );

  it('throttles on the per-instance insurance limiter when Redis is down, and counts the store errors', async () => {
    gw = await start(2000);
    await redis.kill();
    try {
      await failFrom(gw.url, V1, '203.0.113.60', 3);
      const res = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.60').set('authorization', bearer(KEYS.teamA));
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.body).toEqual(throttled(3, '1m0s'));
      const other = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.61').set('authorization', bearer(KEYS.teamA));
      expect(other.status).toBe(200);
      expect(await metricValue(gw.url, 'tollgate_store_errors_total{store="redis"}')).toBeGreaterThan(0);
    } finally {
      await redis.restart();
    }
  });

  it('answers while Redis is stalled (no request waits for it), on the insurance limiter', async () => {
    gw = await start(100);
    const sleeper = new Redis(redis.url);
    // Connected first, so the sleep is under way before the first request reaches Redis.
    await sleeper.ping();
    let asleep = true;
    const nap = sleeper.call('debug', 'sleep', '8').finally(() => (asleep = false));
    try {
      await failFrom(gw.url, V1, '203.0.113.70', 3);
      const res = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.70').set('authorization', bearer(KEYS.teamA));
      expect(res.status).toBe(429);
      expect(res.body).toEqual(throttled(3, '1m0s'));
      const other = await request(gw.url).get(V1).set('x-forwarded-for', '203.0.113.71').set('authorization', bearer(KEYS.teamA));
      expect(other.status).toBe(200);
      // Every answer above came while Redis was still asleep: none of them waited for it.
      expect(asleep).toBe(true);
    } finally {
      await nap.catch(() => undefined);
      sleeper.disconnect();
    }
  }, 30_000);
});
