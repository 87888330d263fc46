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
const LOST_BOT = 'tg-test-alert-lost-aaaaaaaaaaaaaaaaa';
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
const RECIPE = new URL('../../../docs/examples/verify-signature.mjs', import.meta.url).href;
const { verifyTollgateSignature } = (await import(RECIPE)) as { verifyTollgateSignature: (secret: string, header: unknown, rawBody: string) => boolean };

/** One Redis, one PostgreSQL, the upstreams and a webhook receiver: what every gateway of a describe shares. */
interface Stack {
  redis: TestRedis;
  database: TestDatabase;
  service: FakeUpstream;
  inference: FakeUpstream;
  receiver: WebhookReceiver;
}

async function startStack(): Promise<Stack> {
  const [redis, database, service, inference, receiver] = await Promise.all([startRedis(), createTestDatabase(), startTrainingService(), startInferenceHost(), startWebhookReceiver('ok')]);
  return { redis, database, service, inference, receiver };
}

async function stopStack(stack: Stack, gateways: readonly RunningGateway[]): Promise<void> {
  await Promise.all(gateways.map((gw) => gw.close()));
  await Promise.all([stack.service.close(), stack.inference.close(), stack.redis.stop(), stack.receiver.close()]);
  await stack.database.drop();
}

/** A gateway of the stack with a bot key whose chats cost 0.0001 each; `webhook: false`, none: what it decides is stored nowhere. */
const configFor = (stack: Stack, bot: { id: string; key: string; limits: Record<string, unknown> }, webhook = true) =>
  testConfig(
    { service: stack.service.url, inference: stack.inference.url },
    {
      redis: { url: stack.redis.url },
      database: { url: stack.database.url, refreshIntervalMs: 60_000 },
      auth: { keys: [...KEY_ENTRIES, { id: bot.id, sha256: digest(bot.key), team: 'team-c', limits: bot.limits }], admin: { keys: ADMIN_ENTRIES } },
      metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
      ...(webhook && {
        notifications: {
          webhooks: [{ name: 'finance', url: stack.receiver.url, events: ['budget.*'], format: 'json', secret: SECRET }],
          delivery: { pollMs: 50, leaseMs: 5000, backoffMs: 20, maxBackoffMs: 100, maxAttempts: 4, timeoutMs: 2000, exportSettleMs: 0 },
        },
      }),
    },
  );

const chat = (gw: RunningGateway, key: string) =>
  request(gw.url).post('/v1/chat/completions').set('authorization', bearer(key)).set('x-fixture-usage', '3,1').send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });

/**
 * SPEC 24 end to end: three instances on one Redis and one PostgreSQL, no sink of the test's own —
 * the budget's crossings are decided in Redis, published to the outbox, and delivered by the one
 * instance holding the lease to a real receiver, signed.
 */
describe('budget alerts delivered from the outbox by three instances', () => {
  let stack: Stack;
  let gateways: RunningGateway[] = [];

  beforeAll(async () => {
    stack = await startStack();
    const bot = { id: 'e2e-bot', key: BOT, limits: { costPerDay: 0.001 } };
    gateways = await Promise.all([0, 1, 2].map(() => startGateway(configFor(stack, bot))));
  });
  afterAll(() => stopStack(stack, gateways));

  it('30 requests at once across the instances: the receiver gets one 80% and one 100% event, signed', async () => {
    const { receiver } = stack;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gateways[i % 3]!, BOT)));
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

/**
 * A crossing is decided once (in Redis) and reaches the outbox a few ms later: a process killed in
 * between would take the event with it. A gateway with no webhook stands in for that process
 * here — it spends the budget past 80% and stores nothing. The next instance that charges the
 * budget stores what was lost; a restarted one stores nothing twice.
 */
describe('a budget event its deciding process never stored', () => {
  let stack: Stack;
  const running: RunningGateway[] = [];
  const bot = { id: 'lost-bot', key: LOST_BOT, limits: { costPerDay: 0.001, soft: true } };
  const start = async (webhook: boolean): Promise<RunningGateway> => {
    const gw = await startGateway(configFor(stack, bot, webhook));
    running.push(gw);
    return gw;
  };

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stopStack(stack, running));

  it('is stored and delivered by the next instance that charges the budget, once', async () => {
    const { receiver, database } = stack;
    const quiet = await start(false);
    for (let i = 0; i < 9; i++) expect((await chat(quiet, LOST_BOT)).status).toBe(200);
    await quiet.gateway.settled();
    const alerting = await start(true);
    expect((await chat(alerting, LOST_BOT)).status).toBe(200);
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
    expect((await chat(restarted, LOST_BOT)).status).toBe(200);
    await restarted.gateway.settled();
    const rows = await database.query<{ id: string; state: string }>("select id, state from outbox where sink = 'finance' order by id");
    expect(rows.map((row) => row.state)).toEqual(['delivered', 'delivered']);
    expect(receiver.received).toHaveLength(2);
  });
});
