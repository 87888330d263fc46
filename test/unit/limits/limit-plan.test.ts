import { describe, expect, it } from 'vitest';
import { LimitPlan } from '../../../src/limits/index.js';
import { keyPrincipal, jwtPrincipal, limitsConfig, request } from '../../integration/limits/limiter-fixtures.js';

const NOON = Date.UTC(2025, 4, 1, 12, 0, 0);

describe('limit plan', () => {
  const plan = new LimitPlan(
    limitsConfig({ projects: { 'team-a/*': { rpm: 10 }, 'team-a/prod': { tokensPerDay: 500 } } }),
    'tollgate:',
  );
  const checksOf = (principal: ReturnType<typeof keyPrincipal>, project: string, tokens = 0) => {
    const r = request(principal, project, tokens);
    return plan.checksFor(r.principal, r.project, r.estimatedTokens, NOON);
  };

  it('plans nothing when neither the key nor the project has limits', () => {
    expect(checksOf(keyPrincipal('free', {}), 'team-b/x')).toEqual([]);
  });

  it('keys each scope once under the prefix and the {team} hash tag; a daily budget opens a window to the next UTC midnight', () => {
    const checks = checksOf(keyPrincipal('ci-bot', { rpm: 5, tpm: 100, tokensPerDay: 1000, concurrency: 2 }), 'team-a/prod', 40);
    expect(checks.map((c) => [c.scope, c.limit, c.max, c.cost, c.windowMs, c.key])).toEqual([
      ['key', 'rpm', 5, 1, 60_000, 'tollgate:{team-a}:key:ci-bot'],
      ['key', 'tpm', 100, 40, 60_000, 'tollgate:{team-a}:key:ci-bot'],
      ['key', 'tokensPerDay', 1000, 40, 43_200_000, 'tollgate:{team-a}:key:ci-bot'],
      ['key', 'concurrency', 2, 1, 0, 'tollgate:{team-a}:key:ci-bot'],
      ['project', 'tokensPerDay', 500, 40, 43_200_000, 'tollgate:{team-a}:project:team-a/prod'],
    ]);
  });

  it('applies team/* to a project without an exact entry, with counters of its own', () => {
    const checks = checksOf(keyPrincipal('free', {}), 'team-a/research');
    expect(checks.map((c) => [c.limit, c.max, c.key, c.subject])).toEqual([
      ['rpm', 10, 'tollgate:{team-a}:project:team-a/research', 'project team-a/research'],
    ]);
  });

  it('keeps JWT subjects apart from static keys of the same name', () => {
    const [check] = checksOf(jwtPrincipal('ci-bot', { rpm: 1 }), 'team-b/x');
    expect(check?.key).toBe('tollgate:{team-a}:jwt:ci-bot');
    expect(check?.subject).toBe('subject ci-bot');
  });

  it('reserves whole tokens and never a negative amount', () => {
    expect(checksOf(keyPrincipal('k', { tpm: 100 }), 'team-b/x', 12.2)[0]?.cost).toBe(13);
    expect(checksOf(keyPrincipal('k', { tpm: 100 }), 'team-b/x', -4)[0]?.cost).toBe(0);
  });
});
