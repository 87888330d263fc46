import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, relayTo, type TestDatabase } from '../../helpers/postgres.js';
import type { TcpProxy } from '../../helpers/tcp-proxy.js';
import { eventually } from '../../helpers/wait.js';
import { describeOwnership, describeProjectScope, jobBody, type OwnershipStore } from './ownership-behaviour.js';

/** One PostgreSQL database per suite, created on first use and dropped at its end. */
function postgresStore(): OwnershipStore {
  let database: Promise<TestDatabase> | undefined;
  return {
    name: 'PostgreSQL',
    database: async () => ({ url: (await (database ??= createTestDatabase())).url }),
    drop: async () => void (await (await database)?.drop()),
  };
}

describeOwnership(postgresStore());
describeProjectScope(postgresStore());

const teamA = { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/rl' };
const teamB = { authorization: bearer(KEYS.teamB), 'openai-project': 'team-b/rl' };

describe('ownership across two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let relay: TcpProxy;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    let throughRelay: string;
    ({ relay, url: throughRelay } = await relayTo(database));
    const config = (url: string) =>
      testConfig({ service: service.url, inference: inference.url }, { upstreams: { service: { auth: { bearer: 'shared' } } }, database: { url, refreshIntervalMs: 60_000 } });
    a = await startGateway(config(database.url));
    b = await startGateway(config(throughRelay));
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await relay.close();
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  it('agree within 1 s: a model released on A is refused on B, which held it in memory', async () => {
    const created = await request(a.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'shared', base_model: 'b' });
    const path = `/v1/preview/models/${created.body.id as string}/checkpoints`;
    expect((await request(b.url).get(path).set(teamA)).status).toBe(200);
    expect((await request(b.url).get(path).set(teamB)).status).toBe(404);
    expect((await request(a.url).delete(`/v1/preview/models/${created.body.id as string}`).set(teamA)).status).toBe(200);
    const started = performance.now();
    // The change travels through PostgreSQL to B: polled, there is no event here to await.
    await eventually(async () => (await request(b.url).get(path).set(teamA)).status === 404, 5000);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('serves the events polling of a known job from memory: it goes on while the database does not answer', async () => {
    const model = await request(b.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'polled', base_model: 'b' });
    const job = await request(b.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(jobBody(model.body.id as string));
    const events = `/v1/preview/training-jobs/${job.body.id as string}/events`;
    expect((await request(b.url).get(events).set(teamA)).status).toBe(200);
    relay.stall();
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await request(b.url).get(`${events}?after=evt_${i}`).set(teamA);
      expect(res.status).toBe(200);
      // Far below the request path's database bound (100 ms): no database call was waited on.
      expect(performance.now() - started).toBeLessThan(100);
    }
    expect((await request(b.url).get(events).set(teamB)).status).toBe(404);
    await relay.restore();
  });
});
