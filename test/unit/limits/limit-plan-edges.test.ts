import { describe, expect, it } from 'vitest';
import { LimitPlan } from '../../../src/limits/index.js';
import type { LimitSet } from '../../../src/limit-kinds/index.js';
import { keyPrincipal, limitsConfig } from '../../integration/limits/limiter-fixtures.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const NOON = Date.UTC(2025, 4, 1, 12, 0, 0);
const noLimits = keyPrincipal('plain', {});

describe('limit plan: which scopes apply', () => {
  it('checks a key that has limits when neither its project nor its team has any', () => {
    const plan = new LimitPlan(limitsConfig(), 'tollgate:');
    const checks = plan.checksFor(keyPrincipal('ci-bot', { rpm: 5 }), { team: 'team-a', project: 'prod' }, 0, NOON);
    expect(checks.map((c) => [c.scope, c.limit, c.max, c.key])).toEqual([['key', 'rpm', 5, 'tollgate:{team-a}:key:ci-bot']]);
  });

  it('checks a team that has limits when neither the key nor the project has any', () => {
    const teamLimits: LimitSet = { rpm: 7 };
    const plan = new LimitPlan(limitsConfig(), 'tollgate:', { limitsOf: (team) => (team === 'team-a' ? teamLimits : undefined) });
    const checks = plan.checksFor(noLimits, { team: 'team-a', project: 'prod' }, 0, NOON);
    expect(checks.filter((c) => c.limit === 'rpm').map((c) => [c.scope, c.max, c.key])).toEqual([['team', 7, 'tollgate:{team-a}:team']]);
  });

  it('charges token limits when the reservation is a bare token count (it spends)', () => {
    const plan = new LimitPlan(limitsConfig(), 'tollgate:');
    const [check] = plan.checksFor(keyPrincipal('ci-bot', { tpm: 100 }), { team: 'team-a', project: 'prod' }, 40, NOON);
    expect(check).toEqual({ scope: 'key', subject: 'key ci-bot', limit: 'tpm', max: 100, cost: 40, windowMs: 60_000, key: 'tollgate:{team-a}:key:ci-bot' });
  });

  it('leaves a project with an exact entry of no limits unlimited: the entry replaces team/*', () => {
    const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { rpm: 10 }, 'team-a/free': {} } }), 'tollgate:');
    expect(plan.checksFor(noLimits, { team: 'team-a', project: 'free' }, 0, NOON)).toEqual([]);
    expect(plan.checksFor(noLimits, { team: 'team-a', project: 'other' }, 0, NOON).map((c) => [c.limit, c.max])).toEqual([['rpm', 10]]);
  });

  it("keys a project's counters under its own team even after a key of another team asked for it", () => {
    const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { rpm: 10 } } }), 'tollgate:');
    const prod = { team: 'team-a', project: 'prod' };
    // Refused with 403 before the limits in the gateway; the plan must not remember it under team-b's tag.
    expect(plan.checksFor(keyPrincipal('intruder', {}, 'team-b'), prod, 0, NOON).map((c) => c.key)).toEqual(['tollgate:{team-b}:project:team-a/prod']);
    expect(plan.checksFor(keyPrincipal('owner', {}), prod, 0, NOON).map((c) => c.key)).toEqual(['tollgate:{team-a}:project:team-a/prod']);
    expect(plan.checksFor(keyPrincipal('owner', {}), prod, 0, NOON).map((c) => c.key)).toEqual(['tollgate:{team-a}:project:team-a/prod']);
  });
});

describe('limit plan: the prepared project checks', () => {
  // An rpm check never changes, so a kept plan hands out the same frozen object: a new object means the plan was built again.
  const rpmCheck = (plan: LimitPlan, project: string) => plan.checksFor(noLimits, { team: 'team-a', project }, 0, NOON)[0];

  it('keeps each project ready until as many projects as the bound are kept, then starts over', () => {
    const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { rpm: 10 } } }), 'tollgate:', undefined, 2);
    const first = rpmCheck(plan, 'p1');
    expect(rpmCheck(plan, 'p1')).toBe(first);
    rpmCheck(plan, 'p2');
    expect(rpmCheck(plan, 'p1')).toBe(first);
    expect(rpmCheck(plan, 'p2')).toBe(rpmCheck(plan, 'p2'));
    const third = rpmCheck(plan, 'p3'); // the third project: the two kept ones are forgotten
    expect(rpmCheck(plan, 'p3')).toBe(third);
    const again = rpmCheck(plan, 'p1');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('keeps the projects of two teams side by side', () => {
    const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { rpm: 10 }, 'team-b/*': { rpm: 20 } } }), 'tollgate:', undefined, 10);
    const a = plan.checksFor(noLimits, { team: 'team-a', project: 'x' }, 0, NOON)[0];
    const bKey = keyPrincipal('b', {}, 'team-b');
    const b = plan.checksFor(bKey, { team: 'team-b', project: 'x' }, 0, NOON)[0];
    const a2 = plan.checksFor(noLimits, { team: 'team-a', project: 'y' }, 0, NOON)[0];
    expect(plan.checksFor(noLimits, { team: 'team-a', project: 'x' }, 0, NOON)[0]).toBe(a);
    expect(plan.checksFor(noLimits, { team: 'team-a', project: 'y' }, 0, NOON)[0]).toBe(a2);
    expect(plan.checksFor(bKey, { team: 'team-b', project: 'x' }, 0, NOON)[0]).toBe(b);
  });
});

describe('limit plan: the monthly window', () => {
  const plan = new LimitPlan(limitsConfig({ projects: { 'team-a/*': { costPerMonth: 5 } } }), 'tollgate:');
  const monthlyWindow = (now: number) =>
    plan.checksFor(noLimits, { team: 'team-a', project: 'prod' }, { tokens: 0, costNanos: 1 }, now).find((c) => c.limit === 'costPerMonth')!.windowMs;

  it('opens the next month at its first instant, and follows a clock stepped back into the month before', () => {
    expect(monthlyWindow(Date.UTC(2025, 0, 31, 23))).toBe(HOUR_MS);
    expect(monthlyWindow(Date.UTC(2025, 1, 1))).toBe(28 * DAY_MS); // February 2025, from its first instant
    expect(monthlyWindow(Date.UTC(2025, 1, 1, 1))).toBe(28 * DAY_MS - HOUR_MS);
    // Stepped back a second, over the boundary: January's end, not February's.
    expect(monthlyWindow(Date.UTC(2025, 0, 31, 23, 59, 59))).toBe(1000);
    expect(monthlyWindow(Date.UTC(2025, 1, 10))).toBe(19 * DAY_MS);
    // Stepped back months: that month's end.
    expect(monthlyWindow(Date.UTC(2024, 10, 30, 12))).toBe(12 * HOUR_MS);
    expect(monthlyWindow(Date.UTC(2024, 9, 2))).toBe(30 * DAY_MS);
  });
});
