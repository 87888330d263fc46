import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, digest } from '../../helpers/keys.js';

const KEY = 'tg-test-monthly-budget-gggggggggggggg';
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';

/**
 * SPEC 14.3 `costPerMonth` is the UTC calendar month, not the day: what was spent before
 * midnight still counts the next day, until the 1st. The gateway runs in this process, so
 * faking only `Date` moves its clock (the limiter and the memory store read `Date.now()`);
 * timers and sockets stay real. A completion token costs 100 per million: with
 * `max_tokens: 1` each request reserves 0.0001 USD, so 0.0005 USD is exactly 5 requests.
 */
describe('costPerMonth across a UTC midnight and a month end', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    gw = await startGateway(
      testConfig(
        { service: service.url, inference: inference.url },
        {
          auth: { keys: [{ id: 'monthly-bot', sha256: digest(KEY), team: 'team-m', limits: { costPerMonth: 0.0005 } }] },
          metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
        },
      ),
    );
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const chat = async () => {
    const res = await request(gw.url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(KEY))
      .set('x-fixture-usage', '3,1')
      .set('content-type', 'application/json')
      .send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
    await gw.gateway.settled();
    return res;
  };
  const at = (iso: string) => vi.useFakeTimers({ toFake: ['Date'], now: new Date(iso), shouldAdvanceTime: true });

  it('still refuses the day after the budget ran out, says when the month ends, and admits again on the 1st', async () => {
    at('2026-03-10T23:58:00.000Z');
    for (let i = 0; i < 5; i++) expect((await chat()).status).toBe(200);
    expect((await chat()).status).toBe(429);

    at('2026-03-11T00:01:00.000Z');
    const nextDay = await chat();
    expect(nextDay.status).toBe(429);
    expect(nextDay.body.error).toMatchObject({ type: 'rate_limit_error', code: 'insufficient_quota' });
    expect(nextDay.body.error.message).toMatch(
      /^Monthly cost budget \(costPerMonth\) exhausted on key monthly-bot: limit 0\.0005 USD, used 0\.0005 USD, requested 0\.0001 USD; it resets on the 1st at 00:00 UTC, retry in 503h5[89]m\d+s\.$/,
    );
    // 20 days 23 h 59 min to 2026-04-01T00:00Z, less the seconds this test has taken so far.
    const untilApril = (Date.parse('2026-04-01T00:00:00.000Z') - Date.parse('2026-03-11T00:01:00.000Z')) / 1000;
    expect(Number(nextDay.headers['retry-after'])).toBeLessThanOrEqual(untilApril);
    expect(Number(nextDay.headers['retry-after'])).toBeGreaterThan(untilApril - 120);

    at('2026-04-01T00:00:01.000Z');
    expect((await chat()).status).toBe(200);
  });
});
