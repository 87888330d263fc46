import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { metricValue, startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, relayTo, type TestDatabase } from '../../helpers/postgres.js';
import type { TcpProxy } from '../../helpers/tcp-proxy.js';
import { eventually } from '../../helpers/wait.js';

/**
 * What requests meet while PostgreSQL cannot be reached (a relay in front of it is cut): the
 * ledger's rows wait in a bounded buffer and the oldest are dropped past it, and an ownership
 * lookup that misses memory treats the resource as unknown.
 */
describe('requests during a database outage', () => {
  let database: TestDatabase;
  let relay: TcpProxy;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  const admin = { authorization: bearer(KEYS.admin) };
  const teamA = { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/prod' };

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    let url: string;
    ({ relay, url } = await relayTo(database));
    gw = await startGateway(
      testConfig(
        { service: service.url, inference: inference.url },
        {
          // Teams share one upstream account: ownership is on (unknown resources: deny).
          upstreams: { service: { auth: { bearer: 'shared-upstream-key' } } },
          database: { url, timeoutMs: 300, requestTimeoutMs: 100 },
          metering: { ledger: { maxBufferedRows: 3 } },
        },
      ),
    );
  });
  afterAll(async () => {
    await gw.close();
    await relay.close();
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  const chat = (id: string, usage: string) =>
    request(gw.url)
      .post('/v1/chat/completions')
      .set(teamA)
      .set('x-request-id', id)
      .set('content-type', 'application/json')
      .set('x-fixture-usage', usage)
      .send({ model: 'qwen-14b', messages: [{ role: 'user', content: 'hi' }] });

  it('keeps the newest rows in a bounded buffer, drops and counts the oldest, and writes the rest once the database is back', async () => {
    await relay.cut();
    for (let i = 1; i <= 5; i++) expect((await chat(`outage-${i}`, `${i},1`)).status).toBe(200);
    await eventually(async () => (await metricValue(gw.url, 'tollgate_usage_rows_dropped_total')) === 2, 10_000);
    await relay.restore();
    const today = utcDay();
    const rows = async () => {
      const res = await request(gw.url).get(`/admin/usage/requests?from=${today}&to=${today}&team=team-a`).set(admin);
      return res.status === 200 ? (res.body.data as Array<{ request_id: string; prompt_tokens: number }>).map((row) => [row.request_id, row.prompt_tokens]) : [];
    };
    await eventually(async () => (await rows()).length === 3, 15_000);
    expect((await rows()).sort()).toEqual([
      ['outage-3', 3],
      ['outage-4', 4],
      ['outage-5', 5],
    ]);
    expect(await metricValue(gw.url, 'tollgate_usage_rows_dropped_total')).toBe(2);
  });

  it('serves a known job from memory and refuses one it never saw (404, nothing forwarded)', async () => {
    const model = await request(gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'outage', base_model: 'b' });
    const job = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).send({ model_id: model.body.id, trajectory_groups: [] });
    expect(job.status).toBe(200);
    await relay.cut();
    try {
      expect((await request(gw.url).get(`/v1/preview/training-jobs/${job.body.id as string}/events`).set(teamA)).status).toBe(200);
      const forwarded = service.requests.length;
      const unknown = await request(gw.url).get('/v1/preview/training-jobs/job-never-seen/events').set(teamA);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('resource_not_found');
      expect(service.requests.length).toBe(forwarded);
    } finally {
      await relay.restore();
    }
  });
});
