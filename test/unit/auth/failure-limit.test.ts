import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthFailure, AuthFailureLimit } from '../../../src/auth/index.js';
import { Redis } from 'ioredis';
import { connectRedis, whenConnected, type RedisConnection } from '../../../src/redis/index.js';
import { freePort } from '../../helpers/ports.js';
import { REPLY_SILENCE_MS, startRedis, type TestRedis } from '../../helpers/redis.js';

/**
 * SPEC 15 floods of bad credentials, on one instance without Redis (the limiter is
 * rate-limiter-flexible's RateLimiterMemory, as in production without Redis): what a client
 * from one address sees as its failures accumulate; and a reload on the Redis limiter (a private
 * redis-server). The gateway-level cases are in test/integration/gateway/auth-floods.test.ts.
 */

const OPTIONS = { keyPrefix: 'tollgate:', replySilenceMs: 100, onStoreError: (): void => undefined };
const A = '203.0.113.7';
const B = '203.0.113.8';

const badKey = (): Promise<never> => Promise.reject(new AuthFailure('unknown_key', 'Incorrect API key provided.'));
const goodKey = (): Promise<string> => Promise.resolve('team-a');

/** `count` failed key checks from `address`, each answered with the key check's own 401. */
async function fail(limit: AuthFailureLimit, address: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await expect(limit.guard(address, badKey)).rejects.toMatchObject({ status: 401, reason: 'unknown_key' });
  }
}

/** What a request from `address` with a good key is answered: the key check's result or the refusal. */
async function answer(limit: AuthFailureLimit, address: string): Promise<string | { status: number; code: string; message: string; headers: Readonly<Record<string, string>> }> {
  const check = vi.fn(goodKey);
  try {
    return await limit.guard(address, check);
  } catch (err) {
    if (!(err instanceof AuthFailure)) throw err;
    expect(check).not.toHaveBeenCalled();
    return { status: err.status, code: err.code, message: err.message, headers: err.headers };
  }
}

const throttled = (perMinute: number, seconds: number, retry: string) => ({
  status: 429,
  code: 'too_many_auth_failures',
  message: `Too many failed authentication attempts from this address: limit ${perMinute} per minute, retry in ${retry}.`,
  headers: { 'retry-after': String(seconds) },
});

afterEach(() => {
  vi.useRealTimers();
});

/**
 * Built at perMinute 1, reloaded to 3: two failures are served, the third blocks for 60 s. (A
 * block marks the address with the limiter's `points` + 1 failures: a limiter a reload did not
 * give the new number would mark it with 2, below 3, and not block.)
 */
async function expectBlockAtRaisedLimit(limit: AuthFailureLimit): Promise<void> {
  limit.configure({ perMinute: 3, blockSeconds: 60 });
  await fail(limit, A, 2);
  expect(await answer(limit, A)).toBe('team-a');
  await fail(limit, A, 1);
  expect(await answer(limit, A)).toEqual(throttled(3, 60, '1m0s'));
}

describe('auth failure limit (memory)', () => {
  it('serves an address below perMinute failures and refuses it at perMinute, for blockSeconds, without calling the key check', async () => {
    const limit = new AuthFailureLimit({ perMinute: 3, blockSeconds: 7 }, undefined, OPTIONS);
    await fail(limit, A, 2);
    expect(await answer(limit, A)).toBe('team-a');
    await fail(limit, A, 1);
    expect(await answer(limit, A)).toEqual(throttled(3, 7, '7s'));
    expect(await answer(limit, B)).toBe('team-a');
  });

  it('says the block in whole seconds from the failure that reached the limit (Retry-After 90, 1m30s)', async () => {
    const limit = new AuthFailureLimit({ perMinute: 1, blockSeconds: 90 }, undefined, OPTIONS);
    await fail(limit, A, 1);
    expect(await answer(limit, A)).toEqual(throttled(1, 90, '1m30s'));
  });

  it('passes the 401 through unchanged and counts only 401s: a 403 or a thrown error does not count', async () => {
    const limit = new AuthFailureLimit({ perMinute: 1, blockSeconds: 60 }, undefined, OPTIONS);
    const notAdmin = new AuthFailure('not_admin', 'This key is not an admin key.');
    await expect(limit.guard(A, () => Promise.reject(notAdmin))).rejects.toBe(notAdmin);
    const broken = new Error('store down');
    await expect(limit.guard(A, () => Promise.reject(broken))).rejects.toBe(broken);
    expect(await answer(limit, A)).toBe('team-a');
    const unknown = new AuthFailure('unknown_key', 'Incorrect API key provided.');
    await expect(limit.guard(A, () => Promise.reject(unknown))).rejects.toBe(unknown);
    expect(await answer(limit, A)).toEqual(throttled(1, 60, '1m0s'));
  });

  it('counts nothing and refuses nothing while off (null), and counts again once a reload turns it on', async () => {
    const limit = new AuthFailureLimit(null, undefined, OPTIONS);
    await fail(limit, A, 40);
    expect(await answer(limit, A)).toBe('team-a');
    limit.configure({ perMinute: 2, blockSeconds: 5 });
    await fail(limit, A, 2);
    expect(await answer(limit, A)).toEqual(throttled(2, 5, '5s'));
    limit.configure(null);
    expect(await answer(limit, A)).toBe('team-a');
  });

  it('applies a reloaded perMinute to the next failures, keeping the count so far', async () => {
    const limit = new AuthFailureLimit({ perMinute: 10, blockSeconds: 60 }, undefined, OPTIONS);
    await fail(limit, A, 2);
    limit.configure({ perMinute: 3, blockSeconds: 4 });
    expect(await answer(limit, A)).toBe('team-a');
    await fail(limit, A, 1);
    expect(await answer(limit, A)).toEqual(throttled(3, 4, '4s'));
  });

  it('blocks at a raised perMinute too: the block outlasts the new limit, not the old one', async () => {
    await expectBlockAtRaisedLimit(new AuthFailureLimit({ perMinute: 1, blockSeconds: 60 }, undefined, OPTIONS));
  });

  it('refuses an address whose failures this minute already reach a lowered perMinute, until its minute ends', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(Date.parse('2030-01-01T00:00:00.000Z'));
    const limit = new AuthFailureLimit({ perMinute: 10, blockSeconds: 300 }, undefined, OPTIONS);
    await fail(limit, A, 3);
    limit.configure({ perMinute: 3, blockSeconds: 300 });
    vi.setSystemTime(Date.parse('2030-01-01T00:00:15.000Z'));
    expect(await answer(limit, A)).toEqual(throttled(3, 45, '45s'));
  });

  it('serves the address again once its block has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(Date.parse('2030-01-01T00:00:00.000Z'));
    const limit = new AuthFailureLimit({ perMinute: 1, blockSeconds: 5 }, undefined, OPTIONS);
    await fail(limit, A, 1);
    vi.setSystemTime(Date.parse('2030-01-01T00:00:04.000Z'));
    expect(await answer(limit, A)).toEqual(throttled(1, 1, '1s'));
    vi.setSystemTime(Date.parse('2030-01-01T00:00:05.001Z'));
    expect(await answer(limit, A)).toBe('team-a');
  });
});

describe('auth failure limit (Redis)', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  beforeAll(async () => {
    // DEBUG SLEEP stalls Redis with its connections up.
    redis = await startRedis(['--enable-debug-command', 'yes']);
    connection = connectRedis({ url: redis.url, cluster: undefined })!;
    expect(await whenConnected(connection, 5000)).toBe(true);
  });
  afterAll(async () => {
    connection.disconnect();
    await redis.stop();
  });

  it('blocks at a raised perMinute too: the Redis limiter, not only its insurance, takes the reload', async () => {
    const errors: string[] = [];
    await expectBlockAtRaisedLimit(new AuthFailureLimit({ perMinute: 1, blockSeconds: 60 }, connection, { ...OPTIONS, replySilenceMs: REPLY_SILENCE_MS, onStoreError: () => errors.push('store error') }));
    expect(errors).toEqual([]);
  });

  /** Commands Redis has run so far (the test's own INFO and PING excluded; a script's commands counted): what a stretch of requests cost. */
  async function commandsRun(): Promise<number> {
    const stats = (await connection.info('commandstats')) as string;
    return [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info' && name !== 'ping').reduce((sum, [, , calls]) => sum + Number(calls), 0);
  }

  /** How many commands Redis ran for `work`. */
  async function commandsFor(work: () => Promise<unknown>): Promise<number> {
    const before = await commandsRun();
    await work();
    return (await commandsRun()) - before;
  }

  /** What a request from `address` with a good key (served) costs in Redis: its lookup before the key check, if it is looked up. */
  const lookupCost = (limit: AuthFailureLimit, address: string): Promise<number> => commandsFor(() => expect(limit.guard(address, goodKey)).resolves.toBe('team-a'));

  it("counts an address's failures under <redis.keyPrefix>auth-failures:<address>", async () => {
    const limit = new AuthFailureLimit({ perMinute: 5, blockSeconds: 60 }, connection, { ...OPTIONS, replySilenceMs: REPLY_SILENCE_MS });
    await fail(limit, '198.51.100.1', 2);
    expect(await connection.get('tollgate:auth-failures:198.51.100.1')).toBe('2');
  });

  it('looks an address up in Redis before its key check only while it failed here lately (a window and a block)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2030-01-01T00:00:00.000Z'));
    const limit = new AuthFailureLimit({ perMinute: 5, blockSeconds: 60 }, connection, { ...OPTIONS, replySilenceMs: REPLY_SILENCE_MS });
    const address = '198.51.100.2';
    expect(await lookupCost(limit, address)).toBe(0);
    await fail(limit, address, 1);
    expect(await lookupCost(limit, address)).toBeGreaterThan(0);
    vi.setSystemTime(Date.parse('2030-01-01T00:01:59.999Z'));
    expect(await lookupCost(limit, address)).toBeGreaterThan(0);
    vi.setSystemTime(Date.parse('2030-01-01T00:02:00.001Z'));
    expect(await lookupCost(limit, address)).toBe(0);
    expect(await lookupCost(limit, address)).toBe(0);
  });

  it('while Redis is stalled sends it nothing more after the call it went silent on, and uses it again once it answers', async () => {
    const errors: string[] = [];
    const limit = new AuthFailureLimit({ perMinute: 3, blockSeconds: 60 }, connection, { ...OPTIONS, replySilenceMs: 100, onStoreError: () => errors.push('store error') });
    const perFailure = await commandsFor(() => fail(limit, '198.51.100.3', 1));
    expect([perFailure > 0, errors]).toEqual([true, []]);

    const sleeper = new Redis(redis.url);
    await sleeper.ping();
    const stalledFrom = await commandsRun();
    const nap = sleeper.call('debug', 'sleep', '1');
    // The first waits out the silence (100 ms), the next four are answered at once by the insurance limiter: 429 at 3.
    await fail(limit, '198.51.100.4', 3);
    expect(await answer(limit, '198.51.100.4')).toEqual(throttled(3, 60, '1m0s'));
    await fail(limit, '198.51.100.5', 1);
    await nap;
    sleeper.disconnect();
    // On the limiter's own connection: answered once all it was sent before has run.
    await connection.ping();
    // What reached Redis meanwhile: the sleep, and the one failure it went silent on (run once it woke).
    expect((await commandsRun()) - stalledFrom).toBe(1 + perFailure);
    expect(await connection.get('tollgate:auth-failures:198.51.100.4')).toBe('1');
    expect(errors.length).toBeGreaterThan(0);

    await vi.waitFor(async () => {
      await fail(limit, '198.51.100.6', 1);
      expect(await connection.get('tollgate:auth-failures:198.51.100.6')).not.toBeNull();
    });
  });

  it('remembers at most maxSuspects failing addresses: past it the oldest is no longer looked up first', async () => {
    const limit = new AuthFailureLimit({ perMinute: 5, blockSeconds: 60 }, connection, { ...OPTIONS, replySilenceMs: REPLY_SILENCE_MS, maxSuspects: 2 });
    const [first, second, third] = ['198.51.100.21', '198.51.100.22', '198.51.100.23'];
    for (const address of [first, second, third]) await fail(limit, address, 1);
    expect(await lookupCost(limit, first)).toBe(0);
    expect(await lookupCost(limit, second)).toBeGreaterThan(0);
    expect(await lookupCost(limit, third)).toBeGreaterThan(0);
  });

  it('blocks at a raised perMinute while Redis is away too: its insurance limiter takes the reload', async () => {
    const nothingThere = connectRedis({ url: `redis://127.0.0.1:${await freePort()}`, cluster: undefined })!;
    const errors: string[] = [];
    try {
      await expectBlockAtRaisedLimit(new AuthFailureLimit({ perMinute: 1, blockSeconds: 60 }, nothingThere, { ...OPTIONS, onStoreError: () => errors.push('store error') }));
    } finally {
      nothingThere.disconnect();
    }
    expect(errors.length).toBeGreaterThan(0);
  });
});
