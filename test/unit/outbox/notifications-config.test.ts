import { describe, expect, it } from 'vitest';
import { ConfigError, matchesEvent, parseConfig } from '../../../src/config/index.js';

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';
const SECRET = 'a-secret-of-32-bytes-for-hmac-ok';

describe('notifications config (SPEC 24)', () => {
  it('has the SPEC defaults and no sinks', () => {
    expect(parseConfig(minimal, {}).notifications).toMatchObject({ thresholds: [0.8, 1], webhooks: [], export: [] });
  });

  it('takes the SPEC example, the secret and headers from the environment', () => {
    const yaml = `${minimal}notifications:
  thresholds: [0.5, 0.8, 1.0]
  webhooks:
    - { name: finance, url: "https://hooks.example.com/x", events: ["budget.*", "key.expiring"], format: json, secret: "\${HOOK_SECRET}" }
    - { name: ops-slack, url: "https://hooks.slack.com/services/T/B/C", events: ["budget.exhausted"], format: slack }
  export:
    - { name: openmeter, url: "http://openmeter:8888/api/v1/events", batch: 100, headers: { authorization: "Bearer \${OM}" } }
`;
    const { notifications } = parseConfig(yaml, { HOOK_SECRET: SECRET, OM: 'om-token' });
    expect(notifications.thresholds).toEqual([0.5, 0.8, 1]);
    expect(notifications.webhooks).toEqual([
      { name: 'finance', url: 'https://hooks.example.com/x', events: ['budget.*', 'key.expiring'], format: 'json', secret: SECRET },
      { name: 'ops-slack', url: 'https://hooks.slack.com/services/T/B/C', events: ['budget.exhausted'], format: 'slack' },
    ]);
    expect(notifications.export).toEqual([{ name: 'openmeter', url: 'http://openmeter:8888/api/v1/events', batch: 100, headers: { authorization: 'Bearer om-token' } }]);
  });

  it.each([
    ['notifications: {thresholds: [0]}', 'config: notifications.thresholds[0]: must be in (0, 1]'],
    ['notifications: {thresholds: [0.8, 1.2]}', 'config: notifications.thresholds[1]: must be in (0, 1]'],
    ['notifications: {thresholds: [-0.5]}', 'config: notifications.thresholds[0]: must be in (0, 1]'],
    ['notifications: {webhooks: [{name: f, url: "ftp://x.example/h", events: ["budget.*"]}]}', 'config: notifications.webhooks[0].url: must be an http:// or https:// URL'],
    ['notifications: {webhooks: [{name: f, url: "file:///etc/passwd", events: ["budget.*"]}]}', 'config: notifications.webhooks[0].url: must be an http:// or https:// URL'],
    ['notifications: {export: [{name: om, url: "javascript:alert(1)"}]}', 'config: notifications.export[0].url: must be an http:// or https:// URL'],
    [
      'notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["budget.treshold"]}]}',
      'config: notifications.webhooks[0].events[0]: "budget.treshold" matches no event (events: budget.threshold, budget.exhausted, key.expiring, notification.test; patterns like budget.*)',
    ],
    [
      'notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["billing.*"]}]}',
      'config: notifications.webhooks[0].events[0]: "billing.*" matches no event (events: budget.threshold, budget.exhausted, key.expiring, notification.test; patterns like budget.*)',
    ],
    ['notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["budget.*"], secret: "short-secret"}]}', 'config: notifications.webhooks[0].secret: must be at least 16 bytes'],
    ['notifications: {webhooks: [{name: f, url: "https://x.example/h", events: []}]}', 'config: notifications.webhooks[0].events: must name at least one event'],
    ['notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["*"], format: xml}]}', 'config: notifications.webhooks[0].format: must be json or slack'],
    ['notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["*"], retries: 3}]}', 'config: notifications.webhooks[0]: unknown key(s) "retries"'],
    ['notifications: {delivery: {pollMs: 5000, leaseMs: 5000}}', 'config: notifications.delivery.pollMs: must be less than leaseMs (5000)'],
    ['notifications: {delivery: {pollMs: 2000, leaseMs: 29000}}', 'config: notifications.delivery.leaseMs: leaseMs + pollMs must be at most 30000 (another instance takes over within 30 s)'],
    ['notifications: {webhooks: [{name: a, url: "https://x.example/h", events: ["*"]}], export: [{name: a, url: "https://y.example/e"}]}', 'config: notifications.export[0].name: "a" is named twice'],
  ])('refuses %s naming the key path', (yaml, message) => {
    expect(() => parseConfig(`${minimal}${yaml}\n`, {})).toThrow(new ConfigError(message));
  });

  it('never echoes a refused secret', () => {
    const yaml = `${minimal}notifications: {webhooks: [{name: f, url: "https://x.example/h", events: ["*"], secret: "tiny-s3cret"}]}\n`;
    expect(() => parseConfig(yaml, {})).toThrow(ConfigError);
    try {
      parseConfig(yaml, {});
    } catch (error) {
      expect((error as Error).message).not.toContain('tiny-s3cret');
    }
  });

  it('matches exact names, <prefix>.* and *', () => {
    expect(matchesEvent('budget.*', 'budget.threshold')).toBe(true);
    expect(matchesEvent('budget.*', 'budget.exhausted')).toBe(true);
    expect(matchesEvent('budget.*', 'key.expiring')).toBe(false);
    expect(matchesEvent('key.expiring', 'key.expiring')).toBe(true);
    expect(matchesEvent('*', 'notification.test')).toBe(true);
    expect(matchesEvent('budget', 'budget.threshold')).toBe(false);
  });
});
