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
