import { once } from 'node:events';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatGoDuration } from '../../../src/limits/index.js';
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

/** Keys whose one limit the tests use up, then send requests reserving nothing (SPEC 14.3). */
const SPENT_KEYS = {
  costPerDay: 'tg-limits-spent-day-key',
  costPerMonth: 'tg-limits-spent-month-key',
  tokensPerDay: 'tg-limits-spent-tokens-key',
  tpm: 'tg-limits-spent-tpm-key',
} as const;
const TOOLS_KEY = 'tg-limits-tools-key';

type Stack = Awaited<ReturnType<typeof startStack>>;

const limitedConfig = (redisUrl: string) => ({
  auth: {
    keys: [
      { id: 'limited', sha256: digest(KEY), team: 'team-l', limits: { rpm: 5, tpm: 1000 } },
      { id: 'project-limited', sha256: digest(PROJECT_KEY), team: 'team-p', limits: { rpm: 100 } },
      { id: 'daily', sha256: digest(DAILY_KEY), team: 'team-d', limits: { tokensPerDay: 130 } },
      { id: 'spent-day', sha256: digest(SPENT_KEYS.costPerDay), team: 'team-cd', limits: { costPerDay: 0.0001 } },
      { id: 'spent-month', sha256: digest(SPENT_KEYS.costPerMonth), team: 'team-cm' },
      { id: 'spent-tokens', sha256: digest(SPENT_KEYS.tokensPerDay), team: 'team-td', limits: { tokensPerDay: 100 } },
      { id: 'spent-tpm', sha256: digest(SPENT_KEYS.tpm), team: 'team-tm', limits: { tpm: 100 } },
      { id: 'tools-tpm', sha256: digest(TOOLS_KEY), team: 'team-tt', limits: { tpm: 1000 } },
    ],
  },
  rateLimits: { projects: { 'team-p/*': { rpm: 2 }, 'team-cm/*': { costPerMonth: 0.0001 } }, defaultCompletionTokens: 100 },
  // A completion token of `m` costs 0.0001 USD and a prompt token nothing: a request with
  // max_completion_tokens 0 reserves no cost at all.
  metering: { prices: { models: { m: { prompt: 0, completion: 100 } } } },
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

    describe('a used-up limit refuses requests that reserve nothing (SPEC 14.3)', () => {
      const TOOLS = [{ type: 'function', function: { name: 'lookup', description: 'Looks a run up.', parameters: { type: 'object' } } }];
      /** The prompt only in `tools`, nothing asked of the completion: before SPEC 14.3 this reserved 0. */
      const toolsOnly = JSON.stringify({ model: 'm', messages: [], tools: TOOLS, max_completion_tokens: 0 });
      /** An empty prompt and max_completion_tokens 0: reserves 0 tokens and 0 cost whatever is counted. */
      const nothing = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '' }], max_completion_tokens: 0 });
      const post = (key: string, body: string, usage?: string) => {
        const req = request(stack.gw.url).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).set('content-type', 'application/json');
        return (usage === undefined ? req : req.set('x-fixture-usage', usage)).send(body);
      };
      /** Uses the limit up: reserves 100 tokens (0.0001 USD at max_tokens 1) and reports exactly that much used. */
      const useUp = async (key: string, body: string, usage: string): Promise<void> => {
        expect((await post(key, body, usage)).status).toBe(200);
        await stack.gw.gateway.settled();
      };
      const expectRefused = (res: request.Response, code: string, message: (retry: string) => string): void => {
        expect(res.status).toBe(429);
        const retryAfter = Number(res.headers['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(res.body).toEqual({ error: { message: message(formatGoDuration(retryAfter * 1000)), type: 'rate_limit_error', param: null, code } });
      };
      const oneToken = JSON.stringify({ model: 'm', messages: [], max_tokens: 1 });

      it('answers 429 insufficient_quota to both once costPerDay is used up', async () => {
        await useUp(SPENT_KEYS.costPerDay, oneToken, '3,1');
        for (const body of [toolsOnly, nothing]) {
          const res = await post(SPENT_KEYS.costPerDay, body);
          expectRefused(res, 'insufficient_quota', (retry) =>
            `Daily cost budget (costPerDay) exhausted on key spent-day: limit 0.0001 USD, used 0.0001 USD, requested 0 USD; it resets at 00:00 UTC, retry in ${retry}.`,
          );
          expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(86_400);
          // A budget in money has no rate-limit header fields.
          expect(res.headers['ratelimit']).toBeUndefined();
        }
      });

      it("answers 429 insufficient_quota to both once a project's costPerMonth is used up", async () => {
        await useUp(SPENT_KEYS.costPerMonth, oneToken, '3,1');
        for (const body of [toolsOnly, nothing]) {
          expectRefused(await post(SPENT_KEYS.costPerMonth, body), 'insufficient_quota', (retry) =>
            `Monthly cost budget (costPerMonth) exhausted on project team-cm/default: limit 0.0001 USD, used 0.0001 USD, requested 0 USD; it resets on the 1st at 00:00 UTC, retry in ${retry}.`,
          );
        }
      });

      it('answers 429 insufficient_quota to both once tokensPerDay is used up', async () => {
        await useUp(SPENT_KEYS.tokensPerDay, chatBody(), '60,40');
        const toolsTokens = Math.ceil(JSON.stringify(TOOLS).length / 4);
        for (const [body, requested] of [[toolsOnly, toolsTokens], [nothing, 0]] as const) {
          const res = await post(SPENT_KEYS.tokensPerDay, body);
          expectRefused(res, 'insufficient_quota', (retry) =>
            `Daily token budget (tokensPerDay) exhausted on key spent-tokens: limit 100, used 100, requested ${requested}, retry in ${retry}.`,
          );
          expect(res.headers['ratelimit-policy']).toBe('"tpd";q=100;w=86400');
          expect(res.headers['ratelimit']).toBe(`"tpd";r=0;t=${res.headers['retry-after']}`);
        }
      });

      it('answers 429 rate_limit_exceeded to both once tpm is used up', async () => {
        await useUp(SPENT_KEYS.tpm, chatBody(), '60,40');
        const toolsTokens = Math.ceil(JSON.stringify(TOOLS).length / 4);
        for (const [body, requested] of [[toolsOnly, toolsTokens], [nothing, 0]] as const) {
          const res = await post(SPENT_KEYS.tpm, body);
          expectRefused(res, 'rate_limit_exceeded', (retry) =>
            `Rate limit reached for tokens per minute (tpm) on key spent-tpm: limit 100, used 100, requested ${requested}, retry in ${retry}.`,
          );
          expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
          expect(res.headers['x-ratelimit-limit-tokens']).toBe('100');
          expect(res.headers['x-ratelimit-remaining-tokens']).toBe('0');
        }
      });

      it('still lists models for a key whose tokensPerDay is used up: /v1/models spends no tokens', async () => {
        // The tokensPerDay test above used this key's budget up.
        const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${SPENT_KEYS.tokensPerDay}`);
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe('"tpd";q=100;w=86400');
        expect(res.headers['ratelimit']).toMatch(/^"tpd";r=0;t=\d+$/);
      });

      it('refuses a tools array that alone is larger than tpm as too large', async () => {
        const tools = [{ type: 'function', function: { name: 'lookup', description: 'x'.repeat(8000) } }];
        const requested = Math.ceil(JSON.stringify(tools).length / 4);
        const res = await post(TOOLS_KEY, JSON.stringify({ model: 'm', messages: [], tools, max_completion_tokens: 0 }));
        expect(res.status).toBe(429);
        expect(res.headers['retry-after']).toBe('60');
        expect(res.body).toEqual({
          error: {
            message: `Request too large for tokens per minute (tpm) on key tools-tpm: limit 1000, requested ${requested}. Lower max_tokens or shorten the messages.`,
            type: 'rate_limit_error',
            param: null,
            code: 'rate_limit_exceeded',
          },
        });
        expect(res.headers['x-ratelimit-remaining-tokens']).toBe('1000');
      });
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
