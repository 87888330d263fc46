import { describe, expect, it } from 'vitest';
import { LimitPlan } from '../../../src/limits/index.js';
import { keyPrincipal, limitsConfig, request } from '../../integration/limits/limiter-fixtures.js';

const NOON = Date.UTC(2025, 4, 1, 12, 0, 0);
const DAY_MS = 86_400_000;

describe('limit plan reused across requests', () => {
  const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { tpm: 1000, tokensPerDay: 5000 } } }), 'tollgate:');
  const ciBot = keyPrincipal('ci-bot', { rpm: 5, tpm: 100, tokensPerDay: 1000, concurrency: 2 });
  const checksOf = (project: string, tokens: number, now: number) => {
    const r = request(ciBot, project, tokens);
    return plan.checksFor(r.principal, r.project, r.estimatedTokens, now);
  };

  it("gives each request its own token costs, leaving an earlier request's checks as they were", () => {
    const first = checksOf('team-a/prod', 40, NOON);
    const second = checksOf('team-a/prod', 70, NOON);
    expect(first.map((c) => c.cost)).toEqual([1, 40, 40, 1, 40, 40]);
    expect(second.map((c) => c.cost)).toEqual([1, 70, 70, 1, 70, 70]);
  });

  it("gives the daily budget the time left in the request's own UTC day, the monthly one the time left in its month", () => {
    checksOf('team-a/prod', 10, NOON);
    const nextDay = checksOf('team-a/prod', 10, NOON + DAY_MS + 3_600_000);
    expect(nextDay.filter((c) => c.limit === 'tokensPerDay').map((c) => [c.key, c.windowMs])).toEqual([
      ['tollgate:{team-a}:key:ci-bot', 39_600_000],
      ['tollgate:{team-a}:project:team-a/prod', 39_600_000],
    ]);
    const budget = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { costPerMonth: 5 } } }), 'tollgate:');
    const monthly = (now: number) => budget.checksFor(ciBot, { team: 'team-a', project: 'prod' }, { tokens: 0, costNanos: 1 }, now).find((c) => c.limit === 'costPerMonth')!;
    // May has 31 days: from noon on May 1st, 30.5 days are left; a month later (June 1st, 13:00), 29 days and 11 hours.
    expect(monthly(NOON).windowMs).toBe(30.5 * DAY_MS);
    expect(monthly(Date.UTC(2025, 5, 1, 13)).windowMs).toBe(29 * DAY_MS + 11 * 3_600_000);
    expect(monthly(Date.UTC(2025, 5, 30, 23, 59, 59, 999)).windowMs).toBe(1);
  });

  it('keeps the counters of two projects of a team apart', () => {
    const prod = checksOf('team-a/prod', 0, NOON).filter((c) => c.scope === 'project');
    const dev = checksOf('team-a/dev', 0, NOON).filter((c) => c.scope === 'project');
    expect(prod.map((c) => c.key)).toEqual(['tollgate:{team-a}:project:team-a/prod', 'tollgate:{team-a}:project:team-a/prod']);
    expect(dev.map((c) => [c.key, c.subject])).toEqual([
      ['tollgate:{team-a}:project:team-a/dev', 'project team-a/dev'],
      ['tollgate:{team-a}:project:team-a/dev', 'project team-a/dev'],
    ]);
  });
});
