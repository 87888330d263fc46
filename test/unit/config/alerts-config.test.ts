import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';

describe('alerts config (SPEC 24): soft budgets and notification thresholds', () => {
  it('defaults the thresholds to 0.8 and 1.0, and takes them sorted', () => {
    expect(parseConfig(minimal, {}).notifications.thresholds).toEqual([0.8, 1]);
    expect(parseConfig(`${minimal}notifications: {thresholds: [1, 0.5, 0.9]}\n`, {}).notifications.thresholds).toEqual([0.5, 0.9, 1]);
  });

  it('takes soft on project, key and team limits', () => {
    const config = parseConfig(
      `${minimal}rateLimits: {projects: {"team-a/*": {costPerMonth: 2000, soft: true}}}\n` +
        'auth: {keys: [{id: k, sha256: "' + 'a'.repeat(64) + '", team: team-a, limits: {tokensPerDay: 100, soft: true}}]}\n' +
        'teams: [{id: team-a, limits: {costPerDay: 5, soft: false}}]\n',
      {},
    );
    expect(config.rateLimits.projects['team-a/*']).toEqual({ costPerMonth: 2000, soft: true });
    expect(config.auth.keys[0]!.limits).toEqual({ tokensPerDay: 100, soft: true });
    expect(config.teams.records[0]!.limits).toEqual({ costPerDay: 5, soft: false });
  });

  it.each([
    ['rateLimits: {projects: {"team-a/*": {costPerMonth: 10, soft: "yes"}}}', 'config: rateLimits.projects.team-a/*.soft: Invalid input: expected boolean, received string'],
    ['notifications: {thresholds: [0]}', 'config: notifications.thresholds[0]: must be in (0, 1]'],
    ['notifications: {thresholds: [0.8, 1.5]}', 'config: notifications.thresholds[1]: must be in (0, 1]'],
    ['notifications: {thresholds: [0.8, 0.8]}', 'config: notifications.thresholds: must not repeat a threshold'],
  ])('refuses %s naming the key path', (yaml, message) => {
    expect(() => parseConfig(`${minimal}${yaml}\n`, {})).toThrow(new ConfigError(message));
  });
});
