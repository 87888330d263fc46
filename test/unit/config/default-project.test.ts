import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';

const upstreams = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';
const SHA = 'a'.repeat(64);
const withKey = (key: string): string => `${upstreams}auth: {keys: [{id: k, sha256: "${SHA}", team: t, ${key}}]}\n`;

/** SPEC 6.2: a key's defaultProject is always one of its projects. */
describe('defaultProject of a config key', () => {
  it.each([
    ['projects: ["*"]', 'default'],
    ['projects: ["prod"]', 'prod'],
    ['projects: ["prod", "research"]', 'prod'],
    ['projects: ["prod", "default"]', 'default'],
    ['projects: ["*"], defaultProject: staging', 'staging'],
    ['projects: ["prod", "research"], defaultProject: research', 'research'],
  ])('with %s is %s', (key, expected) => {
    expect(parseConfig(withKey(key), {}).auth.keys[0]!.defaultProject).toBe(expected);
  });

  it('is "default" for a key that names no projects (they default to ["*"])', () => {
    expect(parseConfig(withKey('limits: {}'), {}).auth.keys[0]!.defaultProject).toBe('default');
  });

  it('refuses a defaultProject outside the key\'s projects, naming the key path', () => {
    expect(() => parseConfig(withKey('projects: ["prod"], defaultProject: staging'), {}, 'prod.yaml')).toThrow(
      new ConfigError('prod.yaml: auth.keys[0].defaultProject: "staging" is not one of the key\'s projects (prod); name one of them, or leave it out to use prod'),
    );
  });

  it('refuses a key with an empty project list: it could use no project at all', () => {
    expect(() => parseConfig(withKey('projects: []'), {}, 'c.yaml')).toThrow(new ConfigError('c.yaml: auth.keys[0].projects: must name at least one project (or "*")'));
  });
});
