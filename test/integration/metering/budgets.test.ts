import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES } from '../../helpers/keys.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

const BUDGET_KEY = 'tg-test-budget-key-ddddddddddddddddd';
const PROJECT_KEY = 'tg-test-project-budget-eeeeeeeeeeeeee';
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';

/**
 * SPEC 14.3: cost budgets work like tokensPerDay — the estimated cost is reserved before
 * forwarding and settled to the real one, atomically across instances. A completion token of
 * the priced model costs 100 per million (0.0001 USD): with `max_tokens: 1` and 1-token replies
 * the reservation is the cost, so a budget of 0.001 USD is exactly 10 requests.
 */
describe('cost budgets across three instances on one Redis', () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateways: RunningGateway[];

  beforeAll(async () => {
    [redis, service, inference] = await Promise.all([startRedis(), startTrainingService(), startInferenceHost()]);
    const config = () =>
      testConfig(
        { service: service.url, inference: inference.url },
        {
          redis: { url: redis.url },
          auth: {
            keys: [
              ...KEY_ENTRIES,
              { id: 'budget-bot', sha256: digest(BUDGET_KEY), team: 'team-c', limits: { costPerDay: 0.001 } },
              { id: 'project-bot', sha256: digest(PROJECT_KEY), team: 'team-d' },
            ],
            admin: { keys: ADMIN_ENTRIES },
          },
          rateLimits: { projects: { 'team-d/*': { costPerMonth: 0.0005 } } },
          metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
        },
      );
    gateways = await Promise.all([startGateway(config()), startGateway(config()), startGateway(config())]);
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await Promise.all([service.close(), inference.close(), redis.stop()]);
  });

  const chat = (gw: RunningGateway, key: string) =>
    request(gw.url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(key))
      .set('x-fixture-usage', '3,1')
      .set('content-type', 'application/json')
      .send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });

  it('admits exactly as many requests as costPerDay allows, across instances, and names the budget in the 429', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gateways[i % 3]!, BUDGET_KEY)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(20);
    expect(refused[0]!.body.error.code).toBe('insufficient_quota');
    expect(refused[0]!.body.error.type).toBe('rate_limit_error');
    expect(refused[0]!.body.error.message).toMatch(
      /^Daily cost budget \(costPerDay\) exhausted on key budget-bot: limit 0\.001 USD, used 0\.00(09|1) USD, requested 0\.0001 USD; it resets at 00:00 UTC, retry in (?:\d+h)?(?:\d+m)?\d+s\.$/,
    );
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('applies costPerMonth of a team/project entry the same way, naming the monthly budget', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(gateways[i % 3]!, PROJECT_KEY)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body.error.message).toMatch(/^Monthly cost budget \(costPerMonth\) exhausted on project team-d\/default: limit 0\.0005 USD, /);
    expect(refused.body.error.message).toMatch(/it resets on the 1st at 00:00 UTC, retry in /);
  });

  it('settles a budget to the real cost: a reply cheaper than its reservation frees the difference', async () => {
    const key = 'tg-test-settle-budget-fffffffffffffff';
    const config = testConfig(
      { service: service.url, inference: inference.url },
      {
        redis: { url: redis.url },
        auth: { keys: [{ id: 'settle-bot', sha256: digest(key), team: 'team-e', limits: { costPerDay: 0.001 } }] },
        metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
      },
    );
    const gw = await startGateway(config);
    try {
      // Reserves max_tokens 9 (0.0009 USD), uses 1 token (0.0001): 0.0008 comes back.
      const first = await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(key)).set('x-fixture-usage', '3,1').set('content-type', 'application/json').send({ model: MODEL, messages: [], max_tokens: 9 });
      expect(first.status).toBe(200);
      await gw.gateway.settled();
      const second = await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(key)).set('x-fixture-usage', '3,1').set('content-type', 'application/json').send({ model: MODEL, messages: [], max_tokens: 9 });
      expect(second.status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
