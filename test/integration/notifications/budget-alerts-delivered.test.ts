import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../fixtures/webhook-receiver.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

const SECRET = 'a-webhook-secret-of-32-bytes-xyz';
const BOT = 'tg-test-alert-e2e-aaaaaaaaaaaaaaaaa';
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
const RECIPE = new URL('../../../docs/examples/verify-signature.mjs', import.meta.url).href;
const { verifyTollgateSignature } = (await import(RECIPE)) as { verifyTollgateSignature: (secret: string, header: unknown, rawBody: string) => boolean };

/**
 * SPEC 24 end to end: three instances on one Redis and one PostgreSQL, no sink of the test's own —
 * the budget's crossings are decided in Redis, published to the outbox, and delivered by the one
 * instance holding the lease to a real receiver, signed.
 */
describe('budget alerts delivered from the outbox by three instances', () => {
  let redis: TestRedis;
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let receiver: WebhookReceiver;
  let gateways: RunningGateway[];

  beforeAll(async () => {
    [redis, database, service, inference, receiver] = await Promise.all([startRedis(), createTestDatabase(), startTrainingService(), startInferenceHost(), startWebhookReceiver('ok')]);
    const config = () =>
      testConfig(
        { service: service.url, inference: inference.url },
        {
          redis: { url: redis.url },
          database: { url: database.url, refreshIntervalMs: 60_000 },
          auth: { keys: [...KEY_ENTRIES, { id: 'e2e-bot', sha256: digest(BOT), team: 'team-c', limits: { costPerDay: 0.001 } }], admin: { keys: ADMIN_ENTRIES } },
          metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
          notifications: {
            webhooks: [{ name: 'finance', url: receiver.url, events: ['budget.*'], format: 'json', secret: SECRET }],
            delivery: { pollMs: 50, leaseMs: 5000, backoffMs: 20, maxBackoffMs: 100, maxAttempts: 4, timeoutMs: 2000, exportSettleMs: 0 },
          },
        },
      );
    gateways = await Promise.all([0, 1, 2].map(() => startGateway(config())));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await Promise.all([service.close(), inference.close(), redis.stop(), receiver.close()]);
    await database.drop();
  });

  it('30 requests at once across the instances: the receiver gets one 80% and one 100% event, signed', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(gateways[i % 3]!.url)
          .post('/v1/chat/completions')
          .set('authorization', bearer(BOT))
          .set('x-fixture-usage', '3,1')
          .send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    await receiver.waitUntil((received) => received.length >= 2);
    await Promise.all(gateways.map((gw) => gw.gateway.settled()));
    const events = receiver.received.map((r) => ({ body: JSON.parse(r.body) as { id: string; type: string; data: { threshold: number } }, signed: verifyTollgateSignature(SECRET, r.headers['x-tollgate-signature'], r.body) }));
    expect(events.map((e) => [e.body.type, e.body.data.threshold, e.signed]).sort()).toEqual([
      ['budget.exhausted', 1, true],
      ['budget.threshold', 0.8, true],
    ]);
    expect(new Set(events.map((e) => e.body.id)).size).toBe(2);
  });
});

const LOST_BOT = 'tg-test-alert-lost-aaaaaaaaaaaaaaaaa';

/**
 * A crossing is decided once (in Redis) and reaches the outbox a few ms later: a process killed in
 * between would take the event with it. A gateway with no notifications stands in for that
 * process here — it spends the budget past 80% and stores nothing. The next instance that charges
 * the budget stores what was lost; a restarted one stores nothing twice.
 */
describe('a budget event its deciding process never stored', () => {
  let redis: TestRedis;
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let receiver: WebhookReceiver;
  const running: RunningGateway[] = [];

  const config = (alerting: boolean) =>
    testConfig(
      { service: service.url, inference: inference.url },
      {
        redis: { url: redis.url },
        database: { url: database.url, refreshIntervalMs: 60_000 },
        auth: { keys: [...KEY_ENTRIES, { id: 'lost-bot', sha256: digest(LOST_BOT), team: 'team-c', limits: { costPerDay: 0.001, soft: true } }], admin: { keys: ADMIN_ENTRIES } },
        metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
        // The quiet instance has no webhook: what it decides is stored nowhere.
        ...(alerting && {
          notifications: {
            webhooks: [{ name: 'finance', url: receiver.url, events: ['budget.*'], format: 'json', secret: SECRET }],
            delivery: { pollMs: 50, leaseMs: 5000, backoffMs: 20, maxBackoffMs: 100, maxAttempts: 4, timeoutMs: 2000, exportSettleMs: 0 },
          },
        }),
      },
    );
  const start = async (alerting: boolean): Promise<RunningGateway> => {
    const gw = await startGateway(config(alerting));
    running.push(gw);
    return gw;
  };
  // Each chat costs 0.0001 of the bot's 0.001 a day.
  const chat = async (gw: RunningGateway): Promise<number> =>
    (
      await request(gw.url)
        .post('/v1/chat/completions')
        .set('authorization', bearer(LOST_BOT))
        .set('x-fixture-usage', '3,1')
        .send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 })
    ).status;

  beforeAll(async () => {
    [redis, database, service, inference, receiver] = await Promise.all([startRedis(), createTestDatabase(), startTrainingService(), startInferenceHost(), startWebhookReceiver('ok')]);
  });
  afterAll(async () => {
    await Promise.all(running.map((gw) => gw.close()));
    await Promise.all([service.close(), inference.close(), redis.stop(), receiver.close()]);
    await database.drop();
  });

  it('is stored and delivered by the next instance that charges the budget, once', async () => {
    const quiet = await start(false);
    for (let i = 0; i < 9; i++) expect(await chat(quiet)).toBe(200);
    await quiet.gateway.settled();
    const alerting = await start(true);
    expect(await chat(alerting)).toBe(200);
    await receiver.waitUntil((received) => received.length >= 2);
    const delivered = () => receiver.received.map((r) => JSON.parse(r.body) as { id: string; type: string; data: { threshold: number; spent: number } });
    // 80% was passed on the quiet instance: recovered (with the spend as this instance saw it); 100% crossed here.
    expect(delivered().map((e) => [e.type, e.data.threshold, e.data.spent]).sort()).toEqual([
      ['budget.exhausted', 1, 0.001],
      ['budget.threshold', 0.8, 0.001],
    ]);
    // A restarted instance hears both thresholds as passed, hands them over again, and the outbox keeps one row each.
    await alerting.close();
    const restarted = await start(true);
    expect(await chat(restarted)).toBe(200);
    await restarted.gateway.settled();
    const rows = await database.query<{ id: string; state: string }>("select id, state from outbox where sink = 'finance' order by id");
    expect(rows.map((row) => row.state)).toEqual(['delivered', 'delivered']);
    expect(receiver.received).toHaveLength(2);
  });
});
