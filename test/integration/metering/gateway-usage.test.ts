import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startRedis } from '../../helpers/redis.js';

/**
 * SPEC 6.4 / 7 / 14: usage recorded by two gateway instances sharing one PostgreSQL adds up in
 * one ledger, and /admin/usage reports exactly the sum of what the upstream reported.
 */
describe('usage metering across two gateway instances', () => {
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateways: RunningGateway[];
  const today = utcDay();

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startTrainingService();
    inference = await startInferenceHost();
    const config = testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url } });
    gateways = [await startGateway(config), await startGateway(config)];
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  const chat = (gw: RunningGateway, key: string, project: string, model: string, usage: string, stream = false) =>
    request(gw.url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(key))
      .set('OpenAI-Project', project)
      .set('content-type', 'application/json')
      .set('x-fixture-usage', usage)
      .send(JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream }));
  const usage = (query: string) => request(gateways[1]!.url).get(`/admin/usage?${query}`).set('authorization', bearer(KEYS.admin));

  it('reports totals equal to the sum of the upstream usage, per team/project/model/key', async () => {
    const traffic: Array<[number, string, string, string, string, boolean]> = [
      [0, KEYS.teamA, 'team-a/prod', 'qwen-14b', '100,20', false],
      [1, KEYS.teamA, 'team-a/prod', 'qwen-14b', '50,5', true],
      [0, KEYS.teamA, 'team-a/prod', 'llama-8b', '7,3', true],
      [1, KEYS.teamAProdOnly, 'team-a/prod', 'qwen-14b', '10,10', false],
      [0, KEYS.teamA, 'team-a/research', 'qwen-14b', '1,2', false],
      [1, KEYS.teamB, 'team-b/batch', 'llama-8b', '300,40', true],
    ];
    for (const [gw, key, project, model, reported, stream] of traffic) {
      const res = await chat(gateways[gw]!, key, project, model, reported, stream);
      expect(res.status).toBe(200);
    }
    // A failed upstream call is a request with no tokens: counted, never guessed.
    const failed = await chat(gateways[0]!, KEYS.teamB, 'team-b/batch', 'llama-8b', '1,1').set('x-fixture-mode', 'error-500');
    expect(failed.status).toBe(500);
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));

    const byModel = await usage(`from=${today}&to=${today}&groupBy=model`);
    expect(byModel.status).toBe(200);
    expect(byModel.body).toEqual({
      object: 'list',
      currency: 'USD',
      data: [
        { team: 'team-a', project: 'prod', model: 'llama-8b', requests: 1, prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, cost: 0 },
        { team: 'team-a', project: 'prod', model: 'qwen-14b', requests: 3, prompt_tokens: 160, completion_tokens: 35, total_tokens: 195, cost: 0 },
        { team: 'team-a', project: 'research', model: 'qwen-14b', requests: 1, prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, cost: 0 },
        { team: 'team-b', project: 'batch', model: 'llama-8b', requests: 2, prompt_tokens: 300, completion_tokens: 40, total_tokens: 340, cost: 0 },
      ],
    });

    const byKey = await usage(`from=${today}&to=${today}&team=team-a&project=prod&groupBy=key`);
    expect(byKey.body.data).toEqual([
      { team: 'team-a', project: 'prod', key: 'team-a-bot', requests: 3, prompt_tokens: 157, completion_tokens: 28, total_tokens: 185, cost: 0 },
      { team: 'team-a', project: 'prod', key: 'team-a-prod', requests: 1, prompt_tokens: 10, completion_tokens: 10, total_tokens: 20, cost: 0 },
    ]);

    const byDay = await usage(`from=${today}&to=${today}&team=team-b&groupBy=day`);
    expect(byDay.body.data).toEqual([{ team: 'team-b', project: 'batch', day: today, requests: 2, prompt_tokens: 300, completion_tokens: 40, total_tokens: 340, cost: 0 }]);
  });

  it('meters a stream whose usage chunk the gateway forced and hid from the client', async () => {
    const res = await chat(gateways[0]!, KEYS.teamB, 'team-b/streams', 'qwen-14b', '11,22', true);
    expect(res.text).not.toContain('"prompt_tokens"');
    await gateways[0]!.gateway.settled();
    const rows = await usage(`from=${today}&to=${today}&team=team-b&project=streams`);
    expect(rows.body.data).toEqual([{ team: 'team-b', project: 'streams', requests: 1, prompt_tokens: 11, completion_tokens: 22, total_tokens: 33, cost: 0 }]);
  });

  it('attributes usage to the project of the openai client', async () => {
    const client = new OpenAI({ apiKey: KEYS.teamA, baseURL: `${gateways[1]!.url}/v1`, project: 'team-a/openai-sdk', maxRetries: 0 });
    await client.chat.completions.create({ model: 'qwen-14b', messages: [{ role: 'user', content: 'hi' }] });
    const stream = await client.chat.completions.create({ model: 'qwen-14b', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const chunk of stream) void chunk;
    await gateways[1]!.gateway.settled();
    const rows = await usage(`from=${today}&to=${today}&team=team-a&project=openai-sdk&groupBy=model`);
    expect(rows.body.data).toEqual([{ team: 'team-a', project: 'openai-sdk', model: 'qwen-14b', requests: 2, prompt_tokens: 24, completion_tokens: 10, total_tokens: 34, cost: 0 }]);
  });

  it('counts preview and model-list requests per team/project/route, with no tokens', async () => {
    const post = await request(gateways[0]!.url)
      .post('/v1/preview/training-jobs')
      .set('authorization', bearer(KEYS.teamB))
      .set('OpenAI-Project', 'team-b/rl')
      .set('content-type', 'application/json')
      .send('{"model_id":"m-1","trajectory_groups":[]}');
    expect(post.status).toBe(200);
    await request(gateways[1]!.url).get('/v1/models').set('authorization', bearer(KEYS.teamB)).set('OpenAI-Project', 'team-b/rl');
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    const rows = await usage(`from=${today}&to=${today}&team=team-b&project=rl&groupBy=model`);
    expect(rows.body.data).toEqual([
      { team: 'team-b', project: 'rl', model: 'GET /v1/models', requests: 1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 },
      { team: 'team-b', project: 'rl', model: 'POST /v1/preview/training-jobs', requests: 1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 },
    ]);
  });

  it.each([
    ['from=2026-13-01&to=2026-11-02', 'from'],
    ['from=2026-11-02&to=2026-11-01', 'from'],
    ['from=2024-01-01&to=2026-11-01', 'to'],
    ['from=2026-11-01&to=2026-11-02&groupBy=colour', 'groupBy'],
    ['to=2026-11-02', 'from'],
  ])('answers 400 invalid_query for %s', async (query, param) => {
    const res = await usage(query);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_query');
    expect(res.body.error.param).toBe(param);
    expect(res.body.error.type).toBe('invalid_request_error');
  });

  // SPEC 14.1 changed: the repeats keep the client's id as request_id (no more <id>#2, <id>#3); rows differ by the gateway's id.
  it('bills every request of a client that reuses one x-request-id: each has its row under that id, told apart by the gateway-made id', async () => {
    for (const [gw, reported] of [[0, '5,1'], [1, '6,2'], [0, '7,3']] as const) {
      const res = await chat(gateways[gw]!, KEYS.teamB, 'team-b/reuse', 'qwen-14b', reported).set('x-request-id', 'client-fixed-id');
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe('client-fixed-id');
    }
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    const totals = await usage(`from=${today}&to=${today}&team=team-b&project=reuse`);
    expect(totals.body.data).toEqual([{ team: 'team-b', project: 'reuse', requests: 3, prompt_tokens: 18, completion_tokens: 6, total_tokens: 24, cost: 0 }]);
    const rows = await request(gateways[0]!.url).get(`/admin/usage/requests?from=${today}&to=${today}&team=team-b&project=reuse`).set('authorization', bearer(KEYS.admin));
    const data = rows.body.data as Array<{ id: string; request_id: string }>;
    expect(data.map((row) => row.request_id)).toEqual(['client-fixed-id', 'client-fixed-id', 'client-fixed-id']);
    expect(new Set(data.map((row) => row.id)).size).toBe(3);
  });

  it('bills every served request whatever model it names: a NUL or 3,000 characters are stored as PostgreSQL can take them, and rows batched with them too', async () => {
    const huge = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919 + i * i * 31) % 20000))).join('');
    for (const model of ['qw\u0000en', huge, 'plain']) {
      expect((await chat(gateways[0]!, KEYS.teamB, 'team-b/odd-models', model, '3,1')).status).toBe(200);
    }
    await gateways[0]!.gateway.settled();
    const totals = await usage(`from=${today}&to=${today}&team=team-b&project=odd-models`);
    expect(totals.body.data).toEqual([{ team: 'team-b', project: 'odd-models', requests: 3, prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, cost: 0 }]);
    const rows = await request(gateways[0]!.url).get(`/admin/usage/requests?from=${today}&to=${today}&team=team-b&project=odd-models`).set('authorization', bearer(KEYS.admin));
    expect((rows.body.data as Array<{ model: string }>).map((row) => row.model).sort()).toEqual(['plain', 'qw\ufffden', `${huge.slice(0, 255)}…`].sort());
  });

  it('keeps usage totals through a Redis restart: Redis holds only limit counters', async () => {
    const redis = await startRedis();
    const config = testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url }, redis: { url: redis.url } });
    const gw = await startGateway(config);
    try {
      await chat(gw, KEYS.teamB, 'team-b/redis', 'qwen-14b', '21,4').expect(200);
      await gw.gateway.settled();
      const before = await usage(`from=${today}&to=${today}&team=team-b&project=redis`);
      await redis.kill();
      await redis.restart();
      const after = await usage(`from=${today}&to=${today}&team=team-b&project=redis`);
      expect(before.body.data).toEqual([{ team: 'team-b', project: 'redis', requests: 1, prompt_tokens: 21, completion_tokens: 4, total_tokens: 25, cost: 0 }]);
      expect(after.body.data).toEqual(before.body.data);
    } finally {
      await gw.close();
      await redis.stop();
    }
  });
});
