import { describe, expect, it } from 'vitest';
import { LimitPlan } from '../../../src/limits/plan.js';
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

  it('moves the daily budget to the next UTC day and its time left to that day', () => {
    checksOf('team-a/prod', 10, NOON);
    const nextDay = checksOf('team-a/prod', 10, NOON + DAY_MS + 3_600_000);
    expect(nextDay.filter((c) => c.limit === 'tokensPerDay').map((c) => [c.key, c.windowMs])).toEqual([
      ['tollgate:{team-a}:tokensPerDay:key:ci-bot:2025-05-02', 39_600_000],
      ['tollgate:{team-a}:tokensPerDay:project:team-a/prod:2025-05-02', 39_600_000],
    ]);
  });

  it('keeps the counters of two projects of a team apart', () => {
    const prod = checksOf('team-a/prod', 0, NOON).filter((c) => c.scope === 'project');
    const dev = checksOf('team-a/dev', 0, NOON).filter((c) => c.scope === 'project');
    expect(prod.map((c) => c.key)).toEqual(['tollgate:{team-a}:tpm:project:team-a/prod', 'tollgate:{team-a}:tokensPerDay:project:team-a/prod:2025-05-01']);
    expect(dev.map((c) => [c.key, c.subject])).toEqual([
      ['tollgate:{team-a}:tpm:project:team-a/dev', 'project team-a/dev'],
      ['tollgate:{team-a}:tokensPerDay:project:team-a/dev:2025-05-01', 'project team-a/dev'],
    ]);
  });
});
