import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, expandEnv, loadConfig, parseConfig } from '../../../src/config/index.js';

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';

describe('expandEnv', () => {
  it('replaces ${VAR} and ${VAR:-default}', () => {
    expect(expandEnv('a: ${A}\nb: ${B:-fallback}\nc: ${C:-}', { A: 'one' })).toBe('a: one\nb: fallback\nc: ');
  });
  it('uses the default when the variable is set but empty', () => {
    expect(expandEnv('${A:-x}', { A: '' })).toBe('x');
  });
});

describe('parseConfig', () => {
  it('fills every default of SPEC 3', () => {
    const config = parseConfig(minimal, {});
    expect(config.server).toEqual({
      host: '0.0.0.0',
      port: 8080,
      bodyLimit: 10 * 1024 * 1024,
      streamBodyLimit: 200 * 1024 * 1024,
      shutdownGraceMs: 30000,
      trustProxy: false,
      headersTimeoutMs: 30000,
      requestTimeoutMs: 0,
      bodyIdleTimeoutMs: 30000,
      keepAliveTimeoutMs: 65000,
      maxConnections: null,
      pressureHeadersTimeoutMs: 2000,
      maxHeaderBytes: 60 * 1024,
      maxBufferedBytes: 256 * 1024 * 1024,
      workers: 1,
    });
    expect(config.upstreams.service).toEqual({
      url: 'http://svc:9000',
      auth: 'passthrough',
      timeoutMs: 120000,
      idleTimeoutMs: 120000,
      maxSockets: 256,
      identityHeaders: false,
      // SPEC 19's defaults: one target, least-outstanding, eject after 3 failures, one retry.
      balance: 'least-outstanding',
      eject: { failures: 3, baseMs: 10000, maxMs: 300000 },
      retries: 1,
    });
    expect(config.metering).toEqual({ projectHeader: 'OpenAI-Project', forceStreamUsage: true, prices: { currency: 'USD', models: {} }, ledger: { enabled: true, retentionDays: 400, maxBufferedRows: 100_000 } });
    expect(config.rateLimits).toEqual({ onStoreError: 'open', defaultCompletionTokens: 1024, concurrencyLeaseMs: 30000, projects: {} });
    expect(config.redis).toEqual({ url: '', keyPrefix: 'tollgate:', commandTimeoutMs: 100 });
    expect(config.metrics).toEqual({ path: '/metrics', port: null, bearerToken: null, maxTeamProjects: 500 });
    expect(config.auth.failureLimit).toEqual({ perMinute: 30, blockSeconds: 60 });
  });

  it.each([
    ['false', 'false', null],
    ['null', 'null', null],
    ['one number', '{perMinute: 5}', { perMinute: 5, blockSeconds: 60 }],
  ])('reads auth.failureLimit: %s', (_name, value, expected) => {
    expect(parseConfig(`${minimal}auth: {failureLimit: ${value}}`, {}).auth.failureLimit).toEqual(expected);
  });

  it('applies HOST, PORT, SERVICE_URL, INFERENCE_URL, REDIS_URL and LOG_LEVEL overrides', () => {
    const config = parseConfig(minimal, {
      HOST: '127.0.0.1',
      PORT: '9999',
      SERVICE_URL: 'http://other-svc:1',
      INFERENCE_URL: 'http://other-inf:2',
      REDIS_URL: 'redis://r:6379',
      LOG_LEVEL: 'debug',
    });
    expect(config.server.host).toBe('127.0.0.1');
    expect(config.server.port).toBe(9999);
    expect(config.upstreams.service.url).toBe('http://other-svc:1');
    expect(config.upstreams.inference.url).toBe('http://other-inf:2');
    expect(config.redis.url).toBe('redis://r:6379');
    expect(config.logging.level).toBe('debug');
  });

  it('expands variables inside the YAML before parsing', () => {
    const config = parseConfig('upstreams:\n  service: {url: "${SVC:-http://d:1}", auth: {bearer: "${TOKEN}"}}\n  inference: {url: "http://i:2"}\n', { TOKEN: 'sekrit' });
    expect(config.upstreams.service.url).toBe('http://d:1');
    expect(config.upstreams.service.auth).toEqual({ bearer: 'sekrit' });
  });

  it.each([
    ['a bad sha256', `${minimal}auth: {keys: [{id: k, sha256: "xyz", team: t}]}`, 'config: auth.keys[0].sha256: must be a SHA-256 digest: 64 hex characters'],
    ['an upstream name that cannot be a label', 'upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}, "a b": {url: "http://c"}}', 'config: upstreams.a b: an upstream name is letters, digits, _ . - (at most 64, starting with a letter or digit)'],
    ['a negative limit', `${minimal}rateLimits: {projects: {"team-a/*": {tpm: -1}}}`, 'config: rateLimits.projects.team-a/*.tpm: Too small: expected number to be >0'],
    ['a missing upstream', 'upstreams: {service: {url: "http://a"}}', 'config: upstreams.inference: Invalid input: expected object, received undefined'],
    ['a non-http upstream URL', 'upstreams: {service: {url: "ftp://a"}, inference: {url: "http://b"}}', 'config: upstreams.service.url: must be an http:// or https:// URL'],
    ['both url and targets', 'upstreams: {service: {url: "http://a", targets: [{url: "http://b"}]}, inference: {url: "http://b"}}', 'config: upstreams.service.targets: give either url or targets, not both'],
    ['neither url nor targets', 'upstreams: {service: {balance: round-robin}, inference: {url: "http://b"}}', 'config: upstreams.service.url: must be an http:// or https:// URL (or give targets)'],
    ['empty targets', 'upstreams: {service: {url: "http://a"}, inference: {targets: []}}', 'config: upstreams.inference.targets: must name at least one target'],
    ['a bad target URL', 'upstreams: {service: {url: "http://a"}, inference: {targets: [{url: "http://b"}, {url: "b:1"}]}}', 'config: upstreams.inference.targets[1].url: must be an http:// or https:// URL'],
    ['a zero weight', 'upstreams: {service: {url: "http://a"}, inference: {targets: [{url: "http://b", weight: 0}]}}', 'config: upstreams.inference.targets[0].weight: must be greater than 0'],
    ['a negative weight', 'upstreams: {service: {url: "http://a"}, inference: {targets: [{url: "http://b", weight: -2}]}}', 'config: upstreams.inference.targets[0].weight: must be greater than 0'],
    ['an unknown balance', 'upstreams: {service: {url: "http://a", balance: random}, inference: {url: "http://b"}}', 'config: upstreams.service.balance: Invalid option: expected one of "least-outstanding"|"round-robin"'],
    ['a health check path without its slash', 'upstreams: {service: {url: "http://a", healthCheck: {path: "health"}}, inference: {url: "http://b"}}', 'config: upstreams.service.healthCheck.path: must start with /'],
    ['a bad size', `${minimal}server: {bodyLimit: lots}`, 'config: server.bodyLimit: "lots" is not a size (use e.g. 10mb, 512kb or a number of bytes)'],
    ['an unknown section', `${minimal}ratelimits: {}`, 'config: (root): unknown key(s) "ratelimits"'],
    ['invalid YAML', 'server: [1, 2', 'config: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ['two sources of JWT keys', `${minimal}auth: {jwt: {secret: s, jwksUrl: "https://idp/jwks"}}`, 'config: auth.jwt: set exactly one of jwksUrl, secret or publicKey'],
    ['a Redis URL that is not one', `${minimal}redis: {url: "localhost:6379"}`, 'config: redis.url: must be empty (in-memory store) or a redis:// or rediss:// URL'],
    ['a cluster node that is not an address', `${minimal}redis: {cluster: ["redis://a:1", "b"]}`, 'config: redis.cluster[1]: must be a node address: redis://[user:pass@]host:port or host:port'],
    ['a requestTimeoutMs shorter than headersTimeoutMs', `${minimal}server: {headersTimeoutMs: 30000, requestTimeoutMs: 5000}`, 'config: server.requestTimeoutMs: must be 0 (off) or at least headersTimeoutMs'],
    ['a failureLimit of 0 per minute', `${minimal}auth: {failureLimit: {perMinute: 0}}`, 'config: auth.failureLimit.perMinute: Too small: expected number to be >0'],
    ['a team-admin key without a team', `${minimal}auth: {admin: {keys: [{id: lead, sha256: "${'a'.repeat(64)}", role: team-admin}]}}`, 'config: auth.admin.keys[0].team: a team-admin key names its team'],
    ['a viewer key with a team', `${minimal}auth: {admin: {keys: [{id: v, sha256: "${'a'.repeat(64)}", role: viewer, team: t}]}}`, 'config: auth.admin.keys[0].team: only a team-admin key names a team'],
    ['a duplicate key id', `${minimal}auth: {keys: [{id: k, sha256: "${'a'.repeat(64)}", team: t}, {id: k, sha256: "${'b'.repeat(64)}", team: t}]}`, 'config: auth.keys[1].id: duplicate key id "k"'],
  ])('rejects %s with one line naming the key path', (_name, yaml, message) => {
    expect(() => parseConfig(yaml, {})).toThrow(new ConfigError(message));
  });

  it('accepts cluster nodes with credentials or as bare host:port', () => {
    const config = parseConfig(`${minimal}redis: {cluster: ["redis://:s3cret@10.0.0.1:7000", "10.0.0.2:7000", "rediss://u:p@r3:7001"]}`, {});
    expect(config.redis.cluster).toEqual(['redis://:s3cret@10.0.0.1:7000', 'redis://10.0.0.2:7000', 'rediss://u:p@r3:7001']);
  });

  it('takes targets with weights for an upstream pool (SPEC 19)', () => {
    const config = parseConfig('upstreams:\n  service: {url: "http://a:1"}\n  inference:\n    targets: [{url: "http://h1:9001", weight: 2}, {url: "http://h2:9001"}]\n    balance: round-robin\n    eject: {failures: 5}\n    retries: 2\n', {});
    expect(config.upstreams.inference.targets).toEqual([{ url: 'http://h1:9001', weight: 2 }, { url: 'http://h2:9001', weight: 1 }]);
    expect(config.upstreams.inference.url).toBeUndefined();
    expect(config.upstreams.inference.balance).toBe('round-robin');
    expect(config.upstreams.inference.eject).toEqual({ failures: 5, baseMs: 10000, maxMs: 300000 });
    expect(config.upstreams.inference.retries).toBe(2);
    expect(config.upstreams.inference.healthCheck).toBeUndefined();
    const checked = parseConfig('upstreams:\n  service: {url: "http://a:1", healthCheck: {path: /v1/health}}\n  inference: {url: "http://b:1"}\n', {});
    expect(checked.upstreams.service.healthCheck).toEqual({ path: '/v1/health', intervalMs: 5000, timeoutMs: 1000 });
  });
  it('loads config/default.yaml and config/example.yaml', () => {
    expect(loadConfig('config/default.yaml', {}).auth.keys).toEqual([]);
    const example = loadConfig('config/example.yaml', {});
    expect(example.auth.keys[0]?.limits).toEqual({ rpm: 600, tpm: 200000, concurrency: 16, tokensPerDay: 5000000 });
    expect(example.rateLimits.projects['team-a/prod']).toEqual({ rpm: 5000, tokensPerDay: 50000000, costPerMonth: 2000 });
    expect(readFileSync('config/example.yaml', 'utf8')).toContain('cluster:');
  });
});
