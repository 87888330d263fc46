import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { eventually } from '../../helpers/wait.js';

const admin = { authorization: bearer(KEYS.admin) };

/** Polls (the change travels through another instance and PostgreSQL: no event to await here); answers the ms it took. */
async function msUntil(done: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = performance.now();
  await eventually(done, timeoutMs);
  return performance.now() - started;
}

async function signIn(url: string, key: string, address = '192.0.2.10'): Promise<{ cookie: string; csrf: string }> {
  const res = await request(url).post('/admin/session').set('x-forwarded-for', address).send({ key });
  expect(res.status).toBe(200);
  const token = /^tollgate_session=([^;]+);/.exec((res.headers['set-cookie'] as unknown as string[])[0]!)![1];
  return { cookie: `tollgate_session=${token}`, csrf: res.body.csrfToken as string };
}

/** SPEC 17 sessions on two instances sharing PostgreSQL and Redis (SPEC 15's failure counts). */
describe('console sessions across two instances', () => {
  let database: TestDatabase;
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;
  const config = () =>
    testConfig(
      { service: service.url, inference: inference.url },
      {
        database: { url: database.url, refreshIntervalMs: 60_000 },
        redis: { url: redis.url },
        server: { trustProxy: true },
        auth: { failureLimit: { perMinute: 3, blockSeconds: 60 } },
      },
    );

  beforeAll(async () => {
    [database, redis, service, inference] = await Promise.all([createTestDatabase(), startRedis(), startTrainingService(), startInferenceHost()]);
    [a, b] = await Promise.all([startGateway(config()), startGateway(config())]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([service.close(), inference.close(), redis.stop()]);
    await database.drop();
  });

  it('knows a session made on A on B, and ends it on both with a sign-out on B', async () => {
    const session = await signIn(a.url, KEYS.admin);
    expect((await request(b.url).get('/admin/keys').set('cookie', session.cookie)).status).toBe(200);
    const out = await request(b.url).delete('/admin/session').set('cookie', session.cookie).set('x-csrf-token', session.csrf);
    expect(out.status).toBe(204);
    expect((await request(a.url).get('/admin/keys').set('cookie', session.cookie)).status).toBe(401);
  });

  it('ends a session on A within 1 s of its admin key being revoked on B', async () => {
    const made = await request(b.url).post('/admin/admin-keys').set(admin).send({ role: 'admin' });
    await eventually(async () => (await request(a.url).get('/admin/keys').set('authorization', bearer(made.body.key as string))).status === 200);
    const session = await signIn(a.url, made.body.key as string);
    expect((await request(a.url).get('/admin/keys').set('cookie', session.cookie)).status).toBe(200);
    expect((await request(b.url).delete(`/admin/admin-keys/${made.body.id}`).set(admin)).status).toBe(204);
    expect(await msUntil(async () => (await request(a.url).get('/admin/keys').set('cookie', session.cookie)).status === 401)).toBeLessThan(1000);
    const answer = await request(a.url).get('/admin/session').set('cookie', session.cookie);
    expect(answer.body.error.message).toBe('The admin key of this console session has been revoked; sign in again.');
  });

  it('throttles bad sign-in keys per address across instances: 429 too_many_auth_failures with Retry-After, even for a good key', async () => {
    const address = '203.0.113.77';
    for (const url of [a.url, b.url, a.url]) {
      const res = await request(url).post('/admin/session').set('x-forwarded-for', address).send({ key: 'tg-guessed-key-0000000000' });
      expect(res.status).toBe(401);
    }
    const blocked = await request(b.url).post('/admin/session').set('x-forwarded-for', address).send({ key: KEYS.admin });
    expect([blocked.status, blocked.headers['retry-after'], blocked.headers['set-cookie'], blocked.body]).toEqual([
      429,
      '60',
      undefined,
      {
        error: {
          message: 'Too many failed authentication attempts from this address: limit 3 per minute, retry in 1m0s.',
          type: 'rate_limit_error',
          param: null,
          code: 'too_many_auth_failures',
        },
      },
    ]);
    // A session cookie from that address is refused too; other addresses sign in.
    const elsewhere = await signIn(a.url, KEYS.admin, '203.0.113.78');
    const withCookie = await request(a.url).get('/admin/keys').set('x-forwarded-for', address).set('cookie', elsewhere.cookie);
    expect(withCookie.status).toBe(429);
  });
});
