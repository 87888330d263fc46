import { describe, expect, it } from 'vitest';
import { slackText } from '../../../src/outbox/index.js';

/** SPEC 24's `format: slack`: `{"text": "…"}` a person reads in a channel, from each event's own fields. */
describe('slack text', () => {
  it('says whose budget crossed which threshold, and how much of it is spent', () => {
    const text = slackText({
      id: 'budget/key/team-a/ci-bot/costPerDay/2026-11-29/0.8',
      type: 'budget.threshold',
      time: '2026-11-29T10:00:00.000Z',
      team: 'team-a',
      data: { scope: { type: 'key', team: 'team-a', key: 'ci-bot' }, limit: 'costPerDay', budget: 10, spent: 8.05, unit: 'USD', threshold: 0.8, soft: false },
    });
    expect(text).toBe('Tollgate budget.threshold: key team-a/ci-bot reached 80% of its costPerDay budget (8.05 of 10 USD)');
  });

  it('names a team budget by its team, and a token budget in tokens', () => {
    const text = slackText({
      id: 'budget/team/team-b/tokensPerMonth/2026-11-01/1',
      type: 'budget.exhausted',
      time: '2026-11-29T10:00:00.000Z',
      data: { scope: { type: 'team', team: 'team-b' }, limit: 'tokensPerMonth', budget: 1000000, spent: 1000012, unit: 'tokens', threshold: 1, soft: false },
    });
    expect(text).toBe('Tollgate budget.exhausted: team team-b reached 100% of its tokensPerMonth budget (1000012 of 1000000 tokens)');
  });

  it('says which key expires when, and a test event its message', () => {
    const expiring = slackText({
      id: 'key.expiring/k1/2026-12-06T00:00:00.000Z/7d',
      type: 'key.expiring',
      time: '2026-11-29T00:00:00.000Z',
      data: { key: 'k1', team: 'team-a', description: 'ci', expiresAt: '2026-12-06T00:00:00.000Z', days: 7 },
    });
    expect(expiring).toBe('Tollgate key.expiring: key k1 of team team-a expires at 2026-12-06T00:00:00.000Z (in 7 days)');
    expect(slackText({ id: 'test-1', type: 'notification.test', time: '2026-11-29T00:00:00.000Z', data: { message: 'A test notification from Tollgate.', actor: 'admin' } })).toBe(
      'Tollgate notification.test: A test notification from Tollgate.',
    );
  });
});
