import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { metricValue, readyUpstreams, startGateway, tempDatabasePath, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, relayTo, type TestDatabase } from '../../helpers/postgres.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import type { TcpProxy } from '../../helpers/tcp-proxy.js';
import { eventually } from '../../helpers/wait.js';

const admin = { authorization: bearer(KEYS.admin) };

/** Polls (the change travels through another instance and PostgreSQL: no event to await here) until `done`; answers the ms it took. */
async function msUntil(done: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = performance.now();
  await eventually(done, timeoutMs);
  return performance.now() - started;
}

const status = async (gw: RunningGateway, key: string): Promise<number> => (await request(gw.url).get('/v1/models').set('authorization', bearer(key))).status;

/** SPEC 11, 12.1: two instances on one PostgreSQL (and one Redis for their limits). */
describe('keys across two instances sharing PostgreSQL', () => {
  let database: TestDatabase;
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;
  const configFor = (databaseUrl: string) =>
    testConfig({ service: service.url, inference: inference.url }, { database: { url: databaseUrl, refreshIntervalMs: 60_000 }, redis: { url: redis.url } });

  beforeAll(async () => {
    [database, redis, service, inference] = await Promise.all([createTestDatabase(), startRedis(), startTrainingService(), startInferenceHost()]);
    a = await startGateway(configFor(database.url));
    b = await startGateway(configFor(database.url));
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([service.close(), inference.close(), redis.stop()]);
    await database.drop();
  });

  const create = async (gw: RunningGateway, body: Record<string, unknown> = { team: 'team-c' }): Promise<{ id: string; key: string }> => {
    const res = await request(gw.url).post('/admin/keys').set(admin).send(body);
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };

  it('serves a key created on A from B within 1 s', async () => {
    const { key } = await create(a);
    expect(await msUntil(async () => (await status(b, key)) === 200)).toBeLessThan(1000);
  });

  it('refuses a key revoked on B on A within 1 s (20 revocations: p50 and max printed)', async () => {
    const keys = await Promise.all(Array.from({ length: 20 }, () => create(a)));
    await eventually(async () => (await Promise.all(keys.map(({ key }) => status(a, key)))).every((s) => s === 200));
    const times: number[] = [];
    for (const { id, key } of keys) {
      await request(b.url).delete(`/admin/keys/${id}`).set(admin).expect(204);
      times.push(await msUntil(async () => (await status(a, key)) === 401));
    }
    times.sort((x, y) => x - y);
    const p50 = times[Math.floor(times.length / 2)]!;
    const max = times.at(-1)!;
    console.log(`revocation reaching the other instance over 20 revocations: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(max).toBeLessThan(1000);
  });

  it('keeps a rotated secret working on both instances for the overlap, then refuses it on both', async () => {
    const { id, key: old } = await create(a);
    await eventually(async () => (await status(b, old)) === 200);
    const rotatedAt = Date.now();
    const rotated = await request(a.url).post(`/admin/keys/${id}/rotate`).set(admin).send({ overlapSeconds: 2 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.key as string;
    await eventually(async () => (await status(b, fresh)) === 200);
    expect([await status(a, old), await status(b, old)]).toEqual([200, 200]);
    // The overlap ends at a known instant: wait for it (there is no event to await).
    await new Promise((resolve) => setTimeout(resolve, rotatedAt + 2000 + 100 - Date.now()));
    expect([await status(a, old), await status(b, old), await status(a, fresh), await status(b, fresh)]).toEqual([401, 401, 200, 200]);
  });

  it('enforces a PATCHed rpm on both instances, exactly, between them', async () => {
    const { id, key } = await create(a, { team: 'team-c', limits: { rpm: 100 } });
    const patched = await request(b.url).patch(`/admin/keys/${id}`).set(admin).send({ limits: { rpm: 3 } });
    expect(patched.body.limits).toEqual({ rpm: 3 });
    // A learns of the change through PostgreSQL: wait until A's own key cache enforces rpm 3 (its
    // admin API reads the database, not that cache). Each probe A admits is one of the 3.
    let admittedProbes = 0;
    await eventually(async () => {
      const probe = await request(a.url).get('/v1/models').set('authorization', bearer(key));
      if (probe.status === 200) admittedProbes += 1;
      return probe.headers['x-ratelimit-limit-requests'] === '3';
    });
    const left = Math.max(0, 3 - admittedProbes);
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => status(i % 2 === 0 ? a : b, key)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(left);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10 - left);
  });

  it('keeps keys made through the API across a restart', async () => {
    const { key } = await create(a);
    await a.close();
    a = await startGateway(configFor(database.url));
    expect(await status(a, key)).toBe(200);
  });
});

describe('keys on the embedded SQLite file', () => {
  it('survive a restart', async () => {
    const [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    const config = testConfig({ service: service.url, inference: inference.url }, { database: { path: tempDatabasePath() } });
    let gw = await startGateway(config);
    try {
      const created = await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-c' });
      await gw.close();
      gw = await startGateway(config);
      expect(await status(gw, created.body.key as string)).toBe(200);
    } finally {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
    }
  });
});

describe('a database outage', () => {
  let database: TestDatabase;
  let relay: TcpProxy;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    let url: string;
    ({ relay, url } = await relayTo(database));
    gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: { url, timeoutMs: 500 } }));
  });
  afterAll(async () => {
    await gw.close();
    await relay.close();
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  it('keeps serving cached keys, answers admin writes 503 database_unavailable, and recovers by itself', async () => {
    const { body: created } = await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-c' });
    await relay.cut();
    expect(await status(gw, created.key as string)).toBe(200);
    expect(await status(gw, KEYS.teamA)).toBe(200);
    const errorsBefore = await metricValue(gw.url, 'tollgate_database_errors_total');
    const refused = await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-c' });
    expect(refused.status).toBe(503);
    expect(await metricValue(gw.url, 'tollgate_database_errors_total')).toBeGreaterThanOrEqual(errorsBefore + 1);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      error: { message: 'The database cannot be reached, so the change was not made; retry shortly.', type: 'server_error', param: null, code: 'database_unavailable' },
    });
    // Reads are served from memory meanwhile; /readyz says the database is away, and stays ready.
    expect((await request(gw.url).get(`/admin/keys/${created.id as string}`).set(admin)).status).toBe(200);
    const away = await request(gw.url).get('/readyz');
    expect([away.status, away.body]).toEqual([200, { status: 'ready', store: 'connected', database: 'unavailable', upstreams: readyUpstreams(gw.config) }]);
    await relay.restore();
    await eventually(async () => (await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-c' })).status === 201, 10_000);
    expect((await request(gw.url).get('/readyz')).body).toEqual({ status: 'ready', store: 'connected', database: 'connected', upstreams: readyUpstreams(gw.config) });
  });
});
