import { afterEach, describe, expect, it } from 'vitest';
import { formatGoDuration, type Limiter, type LimitEvents } from '../../../src/limits/index.js';
import {
  admitAll,
  jwtPrincipal,
  keyPrincipal,
  recordEvents,
  refusal,
  request,
  secondsToUtcMidnight,
  type LimitSettings,
} from './limiter-fixtures.js';

/**
 * Builds a limiter on the store under test, resolved once it can be used (the Redis suite adds
 * its URL and a fresh key prefix, and waits for the connection).
 */
export type MakeLimiter = (settings: LimitSettings, events: LimitEvents) => Promise<Limiter>;

/**
 * What every store must do the same way (SPEC 6.3), run once against the memory store and
 * once against Redis. Multi-instance exactness lives in the Redis tests only.
 */
export function describeLimiterBehaviour(storeName: string, makeLimiter: MakeLimiter): void {
  describe(`limits (${storeName} store)`, () => {
    const open: Limiter[] = [];
    const recorders: Array<ReturnType<typeof recordEvents>> = [];
    const limiterWith = async (settings: LimitSettings = {}, events = recordEvents()): Promise<Limiter> => {
      recorders.push(events);
      const limiter = await makeLimiter(settings, events);
      open.push(limiter);
      return limiter;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((limiter) => limiter.close()));
      // Every answer came from the store under test, never from a fallback.
      for (const events of recorders.splice(0)) expect(events.storeErrors).toBe(0);
    });

    it('admits a request no limit applies to with no headers', async () => {
      const admission = await (await limiterWith()).admit(request(keyPrincipal('free', {}), 'team-a/default', 500));
      expect(admission.headers).toEqual({});
      expect(() => admission.finish(10)).not.toThrow();
    });

    it('sets the headers of the tightest scope on an admitted request', async () => {
      const limiter = await limiterWith({ projects: { 'team-a/*': { rpm: 50, tpm: 5000 } } });
      const admission = await limiter.admit(request(keyPrincipal('ci-bot', { rpm: 100, tpm: 1000 }), 'team-a/prod', 100));
      expect(admission.headers).toEqual({
        'x-ratelimit-limit-requests': '50',
        'x-ratelimit-remaining-requests': '49',
        'x-ratelimit-reset-requests': '1m0s',
        'x-ratelimit-limit-tokens': '1000',
        'x-ratelimit-remaining-tokens': '900',
        'x-ratelimit-reset-tokens': '1m0s',
        'ratelimit-policy': '"rpm";q=50;w=60, "tpm";q=1000;w=60',
        ratelimit: '"rpm";r=49;t=60, "tpm";r=900;t=60',
      });
    });

    it('lists concurrency and the daily budget in the IETF fields only', async () => {
      const limiter = await limiterWith();
      const admission = await limiter.admit(request(keyPrincipal('ci-bot', { concurrency: 4, tokensPerDay: 1000 }), 'team-a/prod', 100));
      const now = Date.now();
      expect(Object.keys(admission.headers).sort()).toEqual(['ratelimit', 'ratelimit-policy']);
      expect(admission.headers['ratelimit-policy']).toBe('"tpd";q=1000;w=86400, "concurrency";q=4;qu="concurrent-requests"');
      const t = Number(/^"tpd";r=900;t=(\d+), "concurrency";r=3$/.exec(admission.headers['ratelimit']!)?.[1]);
      expect(t).toBeLessThanOrEqual(secondsToUtcMidnight(now - 5000));
      expect(t).toBeGreaterThanOrEqual(secondsToUtcMidnight(now));
    });

    it('answers 429 rate_limit_exceeded naming rpm, the key and the retry time once rpm is spent', async () => {
      const events = recordEvents();
      const limiter = await limiterWith({}, events);
      const ciBot = keyPrincipal('ci-bot', { rpm: 2 });
      await limiter.admit(request(ciBot, 'team-a/prod'));
      await limiter.admit(request(ciBot, 'team-a/prod'));
      const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod')));
      expect(error.status).toBe(429);
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.message).toBe('Rate limit reached for requests per minute (rpm) on key ci-bot: limit 2, retry in 1m0s.');
      expect(error.headers['retry-after']).toBe('60');
      expect(error.headers['x-ratelimit-limit-requests']).toBe('2');
      expect(error.headers['x-ratelimit-remaining-requests']).toBe('0');
      expect(error.headers['x-ratelimit-reset-requests']).toMatch(/^(59(\.\d{1,3})?s|1m0s)$/);
      expect(error.headers['ratelimit']).toMatch(/^"rpm";r=0;t=60$/);
      expect(events.rejections).toEqual(['key:rpm']);
    });

    it('names a JWT principal by its subject', async () => {
      const limiter = await limiterWith();
      const alice = jwtPrincipal('alice', { rpm: 1 });
      await limiter.admit(request(alice, 'team-a/prod'));
      const error = await refusal(limiter.admit(request(alice, 'team-a/prod')));
      expect(error.message).toBe('Rate limit reached for requests per minute (rpm) on subject alice: limit 1, retry in 1m0s.');
    });

    it('answers 429 insufficient_quota until UTC midnight once the daily token budget is spent', async () => {
      const events = recordEvents();
      const limiter = await limiterWith({}, events);
      const ciBot = keyPrincipal('ci-bot', { tokensPerDay: 1000 });
      await limiter.admit(request(ciBot, 'team-a/prod', 600));
      const before = Date.now();
      const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 600)));
      const after = Date.now();
      expect(error.status).toBe(429);
      expect(error.code).toBe('insufficient_quota');
      const retryAfter = Number(error.headers['retry-after']);
      expect(error.message).toBe(
        `Daily token budget (tokensPerDay) exhausted on key ci-bot: limit 1000, used 600, requested 600, retry in ${formatGoDuration(retryAfter * 1000)}.`,
      );
      expect(retryAfter).toBeGreaterThanOrEqual(secondsToUtcMidnight(after));
      expect(retryAfter).toBeLessThanOrEqual(secondsToUtcMidnight(before));
      expect(events.rejections).toEqual(['key:tokensPerDay']);
    });

    it('refuses a request whose estimate alone is above the tpm limit', async () => {
      const limiter = await limiterWith();
      const error = await refusal(limiter.admit(request(keyPrincipal('ci-bot', { tpm: 1000 }), 'team-a/prod', 5000)));
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.message).toBe(
        'Request too large for tokens per minute (tpm) on key ci-bot: limit 1000, requested 5000. Lower max_tokens or shorten the messages.',
      );
    });

    it('settles reserved tokens to the actual usage, and gives all back on finish(0)', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { tpm: 1000 });
      const reserved = await limiter.admit(request(ciBot, 'team-a/prod', 300));
      expect(reserved.headers['x-ratelimit-remaining-tokens']).toBe('700');
      reserved.finish(120);
      await limiter.settled();
      const probe = await limiter.admit(request(ciBot, 'team-a/prod', 0));
      expect(probe.headers['x-ratelimit-remaining-tokens']).toBe('880');

      const aborted = await limiter.admit(request(ciBot, 'team-a/prod', 200));
      expect(aborted.headers['x-ratelimit-remaining-tokens']).toBe('680');
      aborted.finish(0);
      await limiter.settled();
      const again = await limiter.admit(request(ciBot, 'team-a/prod', 0));
      expect(again.headers['x-ratelimit-remaining-tokens']).toBe('880');
    });

    it('refunds unused tokens exactly once however often finish is called, and never again on later calls', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { tpm: 1000, tokensPerDay: 5000 });
      const reserved = await limiter.admit(request(ciBot, 'team-a/prod', 300));
      expect(reserved.headers['x-ratelimit-remaining-tokens']).toBe('700');
      reserved.finish(100);
      reserved.finish(100);
      reserved.finish(0);
      await limiter.settled();
      for (let i = 0; i < 3; i++) {
        const probe = await limiter.admit(request(ciBot, 'team-a/prod', 0));
        expect(probe.headers['x-ratelimit-remaining-tokens']).toBe('900');
        expect(probe.headers['ratelimit']).toMatch(/"tpd";r=4900;/);
        probe.finish(0);
        await limiter.settled();
      }
    });

    it('charges usage above the estimate when the request settles', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { tpm: 1000 });
      (await limiter.admit(request(ciBot, 'team-a/prod', 100))).finish(400);
      await limiter.settled();
      const probe = await limiter.admit(request(ciBot, 'team-a/prod', 0));
      expect(probe.headers['x-ratelimit-remaining-tokens']).toBe('600');
    });

    it("consumes nothing of the key's rpm when the project's rpm refuses", async () => {
      const events = recordEvents();
      const limiter = await limiterWith({ projects: { 'team-a/prod': { rpm: 1 } } }, events);
      const ciBot = keyPrincipal('ci-bot', { rpm: 10 });
      await limiter.admit(request(ciBot, 'team-a/prod'));
      const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod')));
      expect(error.message).toBe('Rate limit reached for requests per minute (rpm) on project team-a/prod: limit 1, retry in 1m0s.');
      expect(events.rejections).toEqual(['project:rpm']);
      const elsewhere = await limiter.admit(request(ciBot, 'team-a/dev'));
      expect(elsewhere.headers['x-ratelimit-remaining-requests']).toBe('8');
    });

    it("consumes nothing of the key's tokens or slots when the project refuses", async () => {
      const limiter = await limiterWith({ projects: { 'team-a/prod': { tpm: 100, concurrency: 1 } } });
      const ciBot = keyPrincipal('ci-bot', { tpm: 1000, concurrency: 5 });
      await limiter.admit(request(ciBot, 'team-a/prod', 80));
      const tokens = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 80)));
      // Both tpm and concurrency refuse; the one that frees last (the tpm window) is reported.
      expect(tokens.message).toBe('Rate limit reached for tokens per minute (tpm) on project team-a/prod: limit 100, used 80, requested 80, retry in 1m0s.');
      const elsewhere = await limiter.admit(request(ciBot, 'team-a/dev', 0));
      expect(elsewhere.headers['x-ratelimit-remaining-tokens']).toBe('920');
      expect(elsewhere.headers['ratelimit']).toBe('"tpm";r=920;t=60, "concurrency";r=3');
    });

    it('gives each project of a team its own team/* counters, and an exact entry replaces team/*', async () => {
      const limiter = await limiterWith({ projects: { 'team-a/*': { rpm: 2 }, 'team-a/prod': { rpm: 3 } } });
      const free = keyPrincipal('free', {});
      const admittedIn = async (project: string): Promise<number> =>
        (await admitAll([limiter], 5, () => request(free, project))).admitted.length;
      expect(await admittedIn('team-a/x')).toBe(2);
      expect(await admittedIn('team-a/y')).toBe(2);
      expect(await admittedIn('team-a/prod')).toBe(3);
    });

    it('admits exactly rpm of 300 concurrent requests', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { rpm: 100 });
      const { admitted, rejected } = await admitAll([limiter], 300, () => request(ciBot, 'team-a/prod'));
      expect(admitted.length).toBe(100);
      expect(rejected.length).toBe(200);
      expect(new Set(rejected.map((e) => `${e.status} ${e.code}`))).toEqual(new Set(['429 rate_limit_exceeded']));
    });

    it('holds exactly `concurrency` requests in flight and frees the slots on finish', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { concurrency: 10 });
      const first = await admitAll([limiter], 300, () => request(ciBot, 'team-a/prod'));
      expect(first.admitted.length).toBe(10);
      expect(first.rejected[0]!.message).toBe('Concurrency limit reached on key ci-bot: limit 10 requests in flight, retry in 1s.');
      expect(first.rejected[0]!.headers['retry-after']).toBe('1');
      for (const admission of first.admitted) admission.finish(0);
      await limiter.settled();
      const second = await admitAll([limiter], 300, () => request(ciBot, 'team-a/prod'));
      expect(second.admitted.length).toBe(10);
    });

    describe('a used-up limit refuses every further request, whatever it reserves (SPEC 14.3)', () => {
      const retryToMidnight = (retryAfter: string | undefined, before: number, after: number): void => {
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(secondsToUtcMidnight(after));
        expect(Number(retryAfter)).toBeLessThanOrEqual(secondsToUtcMidnight(before));
      };

      it('admits a request reserving 0 tokens while one token of tokensPerDay remains, and refuses it once none does', async () => {
        const events = recordEvents();
        const limiter = await limiterWith({}, events);
        const ciBot = keyPrincipal('ci-bot', { tokensPerDay: 100 });
        // Before the window opens: the store adds the time left in the day to its own, later, clock.
        const before = Date.now();
        await limiter.admit(request(ciBot, 'team-a/prod', 99));
        const lastToken = await limiter.admit(request(ciBot, 'team-a/prod', 0));
        expect(lastToken.headers['ratelimit']).toMatch(/^"tpd";r=1;t=\d+$/);
        // More than what remains is refused as before.
        const tooMuch = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 2)));
        expect(tooMuch.message).toMatch(/^Daily token budget \(tokensPerDay\) exhausted on key ci-bot: limit 100, used 99, requested 2, retry in /);
        await limiter.admit(request(ciBot, 'team-a/prod', 1));
        const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0)));
        const after = Date.now();
        expect(error.status).toBe(429);
        expect(error.code).toBe('insufficient_quota');
        const retryAfter = Number(error.headers['retry-after']);
        expect(error.message).toBe(
          `Daily token budget (tokensPerDay) exhausted on key ci-bot: limit 100, used 100, requested 0, retry in ${formatGoDuration(retryAfter * 1000)}.`,
        );
        retryToMidnight(error.headers['retry-after'], before, after);
        expect(error.headers['ratelimit-policy']).toBe('"tpd";q=100;w=86400');
        expect(error.headers['ratelimit']).toBe(`"tpd";r=0;t=${retryAfter}`);
        expect(events.rejections).toEqual(['key:tokensPerDay', 'key:tokensPerDay']);
      });

      it('refuses a request reserving 0 tokens with rate_limit_exceeded once tpm is used up', async () => {
        const events = recordEvents();
        const limiter = await limiterWith({}, events);
        const ciBot = keyPrincipal('ci-bot', { tpm: 100 });
        await limiter.admit(request(ciBot, 'team-a/prod', 100));
        const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0)));
        expect(error.status).toBe(429);
        expect(error.code).toBe('rate_limit_exceeded');
        expect(error.message).toBe('Rate limit reached for tokens per minute (tpm) on key ci-bot: limit 100, used 100, requested 0, retry in 1m0s.');
        expect(error.headers['retry-after']).toBe('60');
        expect(error.headers['x-ratelimit-limit-tokens']).toBe('100');
        expect(error.headers['x-ratelimit-remaining-tokens']).toBe('0');
        expect(error.headers['ratelimit']).toBe('"tpm";r=0;t=60');
        expect(events.rejections).toEqual(['key:tpm']);
      });

      it('refuses a request reserving no cost once costPerDay is used up', async () => {
        const events = recordEvents();
        const limiter = await limiterWith({}, events);
        // 0.000001 USD is 1000 nano-units.
        const ciBot = keyPrincipal('ci-bot', { costPerDay: 0.000001 });
        const before = Date.now();
        await limiter.admit(request(ciBot, 'team-a/prod', 10, 1000));
        const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0, 0)));
        const after = Date.now();
        expect(error.status).toBe(429);
        expect(error.code).toBe('insufficient_quota');
        const retryAfter = Number(error.headers['retry-after']);
        expect(error.message).toBe(
          `Daily cost budget (costPerDay) exhausted on key ci-bot: limit 0.000001 USD, used 0.000001 USD, requested 0 USD; it resets at 00:00 UTC, retry in ${formatGoDuration(retryAfter * 1000)}.`,
        );
        retryToMidnight(error.headers['retry-after'], before, after);
        expect(events.rejections).toEqual(['key:costPerDay']);
      });

      it("refuses a request reserving no cost once a project's costPerMonth is used up", async () => {
        const events = recordEvents();
        const limiter = await limiterWith({ projects: { 'team-a/*': { costPerMonth: 0.000002 } } }, events);
        const ciBot = keyPrincipal('ci-bot', {});
        await limiter.admit(request(ciBot, 'team-a/prod', 10, 1500));
        await limiter.admit(request(ciBot, 'team-a/prod', 0, 0)); // 500 nano-units remain
        await limiter.admit(request(ciBot, 'team-a/prod', 10, 500));
        const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 10, 0)));
        expect(error.status).toBe(429);
        expect(error.code).toBe('insufficient_quota');
        expect(error.message).toMatch(
          /^Monthly cost budget \(costPerMonth\) exhausted on project team-a\/prod: limit 0\.000002 USD, used 0\.000002 USD, requested 0 USD; it resets on the 1st at 00:00 UTC, retry in (?:\d+h)?(?:\d+m)?\d+s\.$/,
        );
        expect(Number(error.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(events.rejections).toEqual(['project:costPerMonth']);
        // Another project of the team has its own budget.
        await limiter.admit(request(ciBot, 'team-a/dev', 10, 0));
      });

      it('lets a request that can spend neither tokens nor money (/v1/models) pass used-up token and cost limits, with their headers', async () => {
        const limiter = await limiterWith();
        const ciBot = keyPrincipal('ci-bot', { rpm: 10, tpm: 100, costPerDay: 0.000001 });
        await limiter.admit(request(ciBot, 'team-a/prod', 100, 1000));
        const listing = await limiter.admit({ ...request(ciBot, 'team-a/prod'), spends: false });
        expect(listing.headers['x-ratelimit-remaining-requests']).toBe('8');
        expect(listing.headers['x-ratelimit-remaining-tokens']).toBe('0');
        // A chat request reserving nothing is refused; of the two limits used up, the budget frees last.
        const chat = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0, 0)));
        expect(chat.code).toBe('insufficient_quota');
        expect(chat.message).toMatch(/^Daily cost budget \(costPerDay\) exhausted on key ci-bot: limit 0\.000001 USD, used 0\.000001 USD, requested 0 USD; /);
      });

      it('refuses a request reserving 0 once a settle has pushed usage over the limit', async () => {
        const limiter = await limiterWith();
        const ciBot = keyPrincipal('ci-bot', { tpm: 100, tokensPerDay: 1000 });
        (await limiter.admit(request(ciBot, 'team-a/prod', 10))).finish(120);
        await limiter.settled();
        const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0)));
        expect(error.code).toBe('rate_limit_exceeded');
        expect(error.message).toBe('Rate limit reached for tokens per minute (tpm) on key ci-bot: limit 100, used 120, requested 0, retry in 1m0s.');
        expect(error.headers['x-ratelimit-remaining-tokens']).toBe('0');
      });
    });

    it('frees a slot once however often finish is called', async () => {
      const limiter = await limiterWith();
      const ciBot = keyPrincipal('ci-bot', { concurrency: 2 });
      const held = await limiter.admit(request(ciBot, 'team-a/prod'));
      const finished = await limiter.admit(request(ciBot, 'team-a/prod'));
      finished.finish(0);
      finished.finish(0);
      finished.finish(5);
      await limiter.settled();
      await limiter.admit(request(ciBot, 'team-a/prod'));
      const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod')));
      expect(error.code).toBe('rate_limit_exceeded');
      held.finish(0);
    });
  });
}
