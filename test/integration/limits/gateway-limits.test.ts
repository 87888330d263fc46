import { once } from 'node:events';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { digest } from '../../helpers/keys.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { openHeldChat } from '../../helpers/raw-http.js';

/**
 * SPEC 6.3 through HTTP: what a client of a limited route sees (headers, 429 bodies, the
 * token reservation settling to real usage), with the memory store and with Redis.
 */
const KEY = 'tg-limits-gateway-key';
const PROJECT_KEY = 'tg-limits-project-key';
const DAILY_KEY = 'tg-limits-daily-key';

type Stack = Awaited<ReturnType<typeof startStack>>;

const limitedConfig = (redisUrl: string) => ({
  auth: {
    keys: [
      { id: 'limited', sha256: digest(KEY), team: 'team-l', limits: { rpm: 5, tpm: 1000 } },
      { id: 'project-limited', sha256: digest(PROJECT_KEY), team: 'team-p', limits: { rpm: 100 } },
      { id: 'daily', sha256: digest(DAILY_KEY), team: 'team-d', limits: { tokensPerDay: 130 } },
    ],
  },
  rateLimits: { projects: { 'team-p/*': { rpm: 2 } }, defaultCompletionTokens: 100 },
  redis: { url: redisUrl },
});

// An empty prompt with max_tokens 100 reserves exactly 100 tokens; the fixture reports 12+5 used.
const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '' }], max_tokens: 100, ...extra });

for (const store of ['memory', 'redis'] as const) {
  describe(`limits seen through the gateway (${store} store)`, () => {
    let redis: TestRedis | undefined;
    let stack: Stack;
    beforeAll(async () => {
      redis = store === 'redis' ? await startRedis() : undefined;
      stack = await startStack(limitedConfig(redis?.url ?? ''));
    });
    afterAll(async () => {
      await stack.close();
      await redis?.stop();
    });

    const chat = (body = chatBody()) =>
      request(stack.gw.url).post('/v1/chat/completions').set('authorization', `Bearer ${KEY}`).set('content-type', 'application/json').send(body);

    it('reserves the estimate, then settles to the reported usage', async () => {
      const first = await chat();
      expect(first.status).toBe(200);
      expect(first.headers['x-ratelimit-limit-requests']).toBe('5');
      expect(first.headers['x-ratelimit-remaining-requests']).toBe('4');
      expect(first.headers['x-ratelimit-reset-requests']).toMatch(/^(\d+m)?\d+(\.\d+)?s$|^\d+ms$/);
      expect(first.headers['x-ratelimit-limit-tokens']).toBe('1000');
      expect(first.headers['x-ratelimit-remaining-tokens']).toBe('900');
      expect(first.headers['ratelimit-policy']).toBe('"rpm";q=5;w=60, "tpm";q=1000;w=60');
      expect(first.headers.ratelimit).toMatch(/^"rpm";r=4;t=\d+, "tpm";r=900;t=\d+$/);
      await stack.gw.gateway.settled();
      // The first request used 17 tokens, not 100: the second sees 1000 - 17 - 100 remaining.
      const second = await chat();
      expect(second.headers['x-ratelimit-remaining-tokens']).toBe('883');
      expect(second.headers['x-ratelimit-remaining-requests']).toBe('3');
    });

    it('gives back the reservation of a stream the client aborted', async () => {
      await stack.gw.gateway.settled();
      const { req, res, held } = await openHeldChat(stack.gw.port, { authorization: `Bearer ${KEY}` }, chatBody({ stream: true }), stack.service);
      // Headers are on streamed responses too: 1000 - 2 x 17 used - 100 reserved.
      expect(res.headers['x-ratelimit-remaining-tokens']).toBe('866');
      const closed = once(held.res, 'close');
      req.destroy();
      await closed;
      await stack.gw.gateway.settled();
      // Nothing was reported for the aborted stream: its 100 tokens are back.
      const next = await chat();
      expect(next.headers['x-ratelimit-remaining-tokens']).toBe('866');
    });

    it('answers 429 rate_limit_exceeded naming the limit, with Retry-After, once rpm is spent', async () => {
      expect((await chat()).status).toBe(200); // the 5th request of the minute
      const res = await chat();
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.headers['x-ratelimit-remaining-requests']).toBe('0');
      expect(res.body.error.type).toBe('rate_limit_error');
      expect(res.body.error.code).toBe('rate_limit_exceeded');
      expect(res.body.error.param).toBeNull();
      expect(res.body.error.message).toMatch(/requests per minute \(rpm\).*key limited.*limit 5/);
    });

    it('applies team/* project limits on top of the key', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${PROJECT_KEY}`).set('OpenAI-Project', 'team-p/batch');
        statuses.push(res.status);
        if (res.status === 429) expect(res.body.error.message).toMatch(/project team-p\/batch/);
      }
      expect(statuses).toEqual([200, 200, 429]);
      // Another project of the team has its own counters.
      const other = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${PROJECT_KEY}`).set('OpenAI-Project', 'team-p/online');
      expect(other.status).toBe(200);
    });

    it('answers 429 insufficient_quota once the daily token budget is spent', async () => {
      const send = () =>
        request(stack.gw.url).post('/v1/chat/completions').set('authorization', `Bearer ${DAILY_KEY}`).set('content-type', 'application/json').send(chatBody());
      // 0 + 100 reserved <= 130, then 17 used + 100 <= 130, then 34 + 100 > 130.
      expect((await send()).status).toBe(200);
      await stack.gw.gateway.settled();
      expect((await send()).status).toBe(200);
      await stack.gw.gateway.settled();
      const res = await send();
      expect(res.status).toBe(429);
      expect(res.body.error.code).toBe('insufficient_quota');
      expect(res.body.error.type).toBe('rate_limit_error');
    });

    it('makes the openai client raise RateLimitError', async () => {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
      const error = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '' }] }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
    });

    it('does not charge quota for a 422', async () => {
      const before = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${DAILY_KEY}`);
      const invalid = await request(stack.gw.url).post('/v1/chat/completions').set('authorization', `Bearer ${DAILY_KEY}`).set('content-type', 'application/json').send('{"model":1}');
      expect(invalid.status).toBe(422);
      const after = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${DAILY_KEY}`);
      // What remains, not when it resets: `t` counts down to midnight and may tick between the two requests.
      const remaining = (header: string): string => header.replace(/;t=\d+/g, '');
      expect(remaining(after.headers.ratelimit as string)).toBe(remaining(before.headers.ratelimit as string));
    });
  });
}
