import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';

const BASE = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';
const parse = (notifications: string) => parseConfig(`${BASE}notifications:\n${notifications}`, {}, 'c.yaml');
const refusal = (notifications: string): string => {
  try {
    parse(notifications);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
};

describe('notifications config (SPEC 24)', () => {
  it('takes the SPEC example and fills the defaults', () => {
    const config = parse(
      [
        '  thresholds: [0.5, 1.0]',
        '  webhooks:',
        '    - { name: finance, url: "https://hooks.example.com/x", events: ["budget.*", "key.expiring"], format: json, secret: "0123456789abcdef" }',
        '    - { name: ops-slack, url: "http://hooks.example.com/y", events: ["budget.exhausted"], format: slack }',
        '  export:',
        '    - { name: openmeter, url: "http://openmeter:8888/api/v1/events", batch: 100, headers: { authorization: "Bearer t" } }',
      ].join('\n'),
    );
    expect(config.notifications.thresholds).toEqual([0.5, 1]);
    expect(config.notifications.webhooks.map((w) => [w.name, w.format])).toEqual([['finance', 'json'], ['ops-slack', 'slack']]);
    expect(config.notifications.export[0]).toEqual({ name: 'openmeter', url: 'http://openmeter:8888/api/v1/events', batch: 100, headers: { authorization: 'Bearer t' } });
    expect(config.notifications.delivery).toEqual({ pollMs: 2000, leaseMs: 20_000, backoffMs: 5000, maxBackoffMs: 600_000, maxAttempts: 12, timeoutMs: 10_000, exportSettleMs: 5000 });
  });

  it('defaults to no sinks and thresholds 0.8 and 1', () => {
    const config = parseConfig(BASE, {}, 'c.yaml');
    expect(config.notifications.thresholds).toEqual([0.8, 1]);
    expect(config.notifications.webhooks).toEqual([]);
    expect(config.notifications.export).toEqual([]);
  });

  it.each([
    ['  webhooks: [{ name: a, url: "ftp://x/y", events: ["*"] }]', 'c.yaml: notifications.webhooks[0].url: must be an http:// or https:// URL'],
    ['  export: [{ name: a, url: "file:///etc/passwd" }]', 'c.yaml: notifications.export[0].url: must be an http:// or https:// URL'],
    ['  webhooks: [{ name: a, url: "http://x/", events: ["budget.spent"] }]', 'c.yaml: notifications.webhooks[0].events[0]: "budget.spent" matches no event (events: budget.threshold, budget.exhausted, key.expiring, notification.test; patterns like budget.*)'],
    ['  webhooks: [{ name: a, url: "http://x/", events: ["keys.*"] }]', 'c.yaml: notifications.webhooks[0].events[0]: "keys.*" matches no event (events: budget.threshold, budget.exhausted, key.expiring, notification.test; patterns like budget.*)'],
    ['  thresholds: [0]', 'c.yaml: notifications.thresholds[0]: must be in (0, 1]'],
    ['  thresholds: [0.8, 1.5]', 'c.yaml: notifications.thresholds[1]: must be in (0, 1]'],
    ['  webhooks: [{ name: a, url: "http://x/", events: ["*"], secret: "short-secret" }]', 'c.yaml: notifications.webhooks[0].secret: must be at least 16 bytes'],
    ['  webhooks: [{ name: a, url: "http://x/", events: ["*"] }]\n  export: [{ name: a, url: "http://y/" }]', 'c.yaml: notifications.export[0].name: "a" is named twice'],
  ])('refuses %s with the key path', (yaml, message) => {
    expect(refusal(yaml)).toBe(message);
  });

  it('never puts a secret into its refusal', () => {
    expect(refusal('  webhooks: [{ name: a, url: "http://x/", events: ["*"], secret: "tiny-secret-xyz" }]')).not.toContain('tiny-secret-xyz');
  });
});
