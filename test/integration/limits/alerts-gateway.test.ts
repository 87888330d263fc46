import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import type { NotificationEvent } from '../../../src/limits/index.js';

const HARD_KEY = 'tg-test-alert-hard-aaaaaaaaaaaaaaaa';
const SOFT_KEY = 'tg-test-alert-soft-bbbbbbbbbbbbbbbb';
const TEAM_KEY = 'tg-test-alert-team-cccccccccccccccc';
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
const DAY_MS = 86_400_000;

/**
 * SPEC 24 through the gateway: three instances on one Redis, each with its own event sink (the
 * outbox's place), answering real chat completions. A completion token costs 0.0001 USD and
 * each reply is 1 token, so a budget of 0.001 USD is 10 requests; 80% is the 8th.
 */
describe('budget alerts and key.expiring through three gateways on one Redis', () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateways: RunningGateway[];
  let published: NotificationEvent[] = [];
  const sink = { publish: (event: NotificationEvent) => void published.push(event) };

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
              { id: 'hard-bot', sha256: digest(HARD_KEY), team: 'team-c', limits: { costPerDay: 0.001 } },
              { id: 'soft-bot', sha256: digest(SOFT_KEY), team: 'team-c', limits: { costPerDay: 0.001, soft: true } },
              { id: 'team-bot', sha256: digest(TEAM_KEY), team: 'team-d' },
            ],
            admin: { keys: ADMIN_ENTRIES },
          },
          teams: [{ id: 'team-d', limits: { costPerDay: 0.0005 } }],
          metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
        },
      );
    gateways = await Promise.all([0, 1, 2].map(() => startGateway(config(), undefined, { events: sink })));
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

  const day = (): { start: string; end: string } => {
    const start = Date.now() - (Date.now() % DAY_MS);
    return { start: new Date(start).toISOString(), end: new Date(start + DAY_MS).toISOString() };
  };
  const budgetEvent = (key: string, threshold: number, soft: boolean) => {
    const window = day();
    return {
      id: `budget/key/team-c/${key}/costPerDay/${window.start.slice(0, 10)}/${threshold}`,
      type: threshold === 1 ? 'budget.exhausted' : 'budget.threshold',
      time: expect.any(String),
      team: 'team-c',
      data: { scope: { type: 'key', team: 'team-c', key }, limit: 'costPerDay', window, budget: 0.001, spent: threshold * 0.001, unit: 'USD', threshold, soft },
    };
  };

  it('30 requests at once on a hard budget: 10 served, 20 refused, and one event per threshold', async () => {
    published = [];
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gateways[i % 3]!, HARD_KEY)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429).map((a) => a.body.error.code)).toEqual(Array(20).fill('insufficient_quota'));
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    expect([...published].sort((a, b) => a.id.localeCompare(b.id))).toEqual([budgetEvent('hard-bot', 0.8, false), budgetEvent('hard-bot', 1, false)]);
  });

  it('a soft budget serves past 100% and alerts once per threshold', async () => {
    published = [];
    for (let i = 0; i < 15; i++) {
      const answer = await chat(gateways[i % 3]!, SOFT_KEY);
      expect(answer.status).toBe(200);
    }
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    expect([...published].sort((a, b) => a.id.localeCompare(b.id))).toEqual([budgetEvent('soft-bot', 0.8, true), budgetEvent('soft-bot', 1, true)]);
  });

  it('a team budget (SPEC 16) alerts in the team scope, then refuses', async () => {
    published = [];
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await chat(gateways[i % 3]!, TEAM_KEY)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    const window = day();
    expect(published.map(({ id, type, data }) => ({ id, type, data }))).toEqual([0.8, 1].map((threshold) => ({
      id: `budget/team/team-d/costPerDay/${window.start.slice(0, 10)}/${threshold}`,
      type: threshold === 1 ? 'budget.exhausted' : 'budget.threshold',
      data: { scope: { type: 'team', team: 'team-d' }, limit: 'costPerDay', window, budget: 0.0005, spent: threshold * 0.0005, unit: 'USD', threshold, soft: false },
    })));
  });

  it('a key created to expire in 3 days gets its 7-day notice at once; one created for 30 days gets none', async () => {
    published = [];
    const admin = { authorization: bearer(KEYS.admin) };
    const expiresAt = new Date(Date.now() + 3 * DAY_MS).toISOString();
    const soon = await request(gateways[0]!.url).post('/admin/keys').set(admin).send({ team: 'team-c', expiresAt, description: 'temp' });
    expect(soon.status).toBe(201);
    const later = await request(gateways[0]!.url).post('/admin/keys').set(admin).send({ team: 'team-c', expiresAt: new Date(Date.now() + 30 * DAY_MS).toISOString() });
    expect(later.status).toBe(201);
    expect(published).toEqual([
      {
        id: `key.expiring/${soon.body.id}/${expiresAt}/7d`,
        type: 'key.expiring',
        time: expect.any(String),
        team: 'team-c',
        data: { key: soon.body.id, team: 'team-c', description: 'temp', expiresAt, days: 7 },
      },
    ]);
    expect(JSON.stringify(published)).not.toContain(soon.body.key);
  });
});
