import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, readyUpstreams, startStack } from '../../helpers/gateway.js';
import { digest } from '../../helpers/keys.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { eventually } from '../../helpers/wait.js';

/**
 * A Redis outage seen through the gateway: `open` keeps serving on the per-instance fallback,
 * `closed` answers 503 store_unavailable and turns /readyz 503; both recover by themselves
 * when Redis comes back, without restarting the gateway.
 */
const KEY = 'tg-outage-key';
type Stack = Awaited<ReturnType<typeof startStack>>;

for (const mode of ['open', 'closed'] as const) {
  describe(`Redis outage with onStoreError: ${mode}`, () => {
    let redis: TestRedis;
    let stack: Stack;
    beforeAll(async () => {
      redis = await startRedis();
      stack = await startStack({
        auth: { keys: [{ id: 'outage', sha256: digest(KEY), team: 'team-o', limits: { rpm: 1000 } }] },
        rateLimits: { onStoreError: mode },
        redis: { url: redis.url },
      });
    });
    afterAll(async () => {
      await stack.close();
      await redis.stop();
    });

    const models = () => request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${KEY}`);
    const storeErrors = (): Promise<number> => metricValue(stack.gw.url, 'tollgate_store_errors_total{store="redis"}');

    it(`${mode === 'open' ? 'keeps serving' : 'answers 503 store_unavailable'} while Redis is down, then recovers`, async () => {
      const before = await models();
      expect(before.status).toBe(200);
      expect(before.headers['x-ratelimit-remaining-requests']).toBe('999');
      const errorsBefore = await storeErrors();

      await redis.kill();
      const started = performance.now();
      const during = await models();
      const elapsedMs = performance.now() - started;
      // A dead Redis must not hold the request (the reply deadline is 100 ms); this bound only catches a hang.
      expect(elapsedMs).toBeLessThan(1000);
      if (mode === 'open') {
        expect(during.status).toBe(200);
        expect(during.headers['x-ratelimit-limit-requests']).toBe('1000');
      } else {
        expect(during.status).toBe(503);
        expect(during.headers['retry-after']).toBe('1');
        expect(during.body).toEqual({
          error: {
            message: 'The rate-limit store (Redis) is unavailable, so the request cannot be admitted; retry shortly.',
            type: 'server_error',
            param: null,
            code: 'store_unavailable',
          },
        });
        const ready = await request(stack.gw.url).get('/readyz');
        expect(ready.status).toBe(503);
        expect(ready.body).toEqual({ status: 'store_unavailable', store: 'unavailable', database: 'connected', upstreams: readyUpstreams(stack.gw.config) });
      }
      expect(await storeErrors()).toBeGreaterThan(errorsBefore);
      // Unlimited routes and liveness do not depend on the store.
      expect((await request(stack.gw.url).get('/healthz')).status).toBe(200);

      await redis.restart();
      await eventually(async () => (await request(stack.gw.url).get('/readyz')).body.store === 'connected');
      const after = await models();
      expect(after.status).toBe(200);
      // Counting starts again in the (empty, restarted) Redis: limits are shared again.
      expect(after.headers['x-ratelimit-remaining-requests']).toBe('999');
      expect((await request(stack.gw.url).get('/readyz')).status).toBe(200);
    });
  });
}
