import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { freePort } from '../../helpers/ports.js';
import { KEY_ENTRIES, KEYS, bearer } from '../../helpers/keys.js';
import { startGatewayProcess, writeTempConfig } from '../../helpers/process.js';
import { openHeldChat } from '../../helpers/raw-http.js';
import { createTestDatabase, relayTo } from '../../helpers/postgres.js';

const ROOT = resolve(import.meta.dirname, '../../..');

const configYaml = (keys: boolean) => `
server: { host: 127.0.0.1, port: 8080, shutdownGraceMs: 5000 }
upstreams:
  service: { url: "\${SERVICE_URL}" }
  inference: { url: "\${INFERENCE_URL:-http://127.0.0.1:9}" }
auth:
  keys: ${keys ? JSON.stringify(KEY_ENTRIES) : '[]'}
`;

describe('start-up', () => {
  it.each([
    ['a sha256 that is not 64 hex chars', 'upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nauth: {keys: [{id: k, sha256: abc, team: t}]}\n', 'auth.keys[0].sha256: must be a SHA-256 digest: 64 hex characters'],
    ['a model route naming an unknown upstream', 'upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nmodels: {routes: [{match: "a/*", upstream: billing}]}\n', 'models.routes[0].upstream: unknown upstream "billing" (configured: service, inference)'],
    ['an alias cycle', 'upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nmodels: {aliases: {a: b, b: a}}\n', 'models.aliases.a: the aliases form a cycle (a -> b -> a)'],
    ['a negative limit', `upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nauth: {keys: [{id: k, sha256: "${'a'.repeat(64)}", team: t, limits: {rpm: -5}}]}\n`, 'auth.keys[0].limits.rpm: Too small: expected number to be >0'],
  ])('exits 1 with one line naming the key path for %s', async (_name, yaml, message) => {
    const path = writeTempConfig(yaml);
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(await freePort()) });
    expect(await proc.exited()).toBe(1);
    expect(proc.output()).toBe(`tollgate: ${path}: ${message}\n`);
  });

  it('exits 1 naming auth.jwt.publicKey when it is not a PEM key', async () => {
    const path = writeTempConfig('upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nauth: {jwt: {publicKey: "not a key", algorithms: [RS256]}}\n');
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(await freePort()) });
    expect(await proc.exited()).toBe(1);
    expect(proc.output()).toMatch(new RegExp(`^tollgate: ${path}: auth\\.jwt\\.publicKey: not a PEM public key usable with RS256 \\(.+\\)\\n$`));
  });

  it('exits 1 naming a missing config file', async () => {
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: '/nonexistent/tollgate.yaml' });
    expect(await proc.exited()).toBe(1);
    expect(proc.output()).toBe('tollgate: /nonexistent/tollgate.yaml: cannot read config file (no such file)\n');
  });

  it('starts with no keys configured, says how to add one, and serves nothing under /v1', async () => {
    const port = await freePort();
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(configYaml(false)), PORT: String(port), SERVICE_URL: 'http://127.0.0.1:9' });
    try {
      await proc.waitFor('tollgate listening');
      expect(proc.output()).toContain('npm run keygen -- --team <team>');
      const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: { authorization: 'Bearer anything' } });
      expect(res.status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      proc.kill();
      await proc.exited();
    }
  });
});

describe('metrics on their own listener', () => {
  it('serves /metrics on metrics.port and not on the main port', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const yaml = `${configYaml(true)}metrics: { port: ${metricsPort}, path: /internal/metrics }\n`;
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port), SERVICE_URL: 'http://127.0.0.1:9' });
    try {
      await proc.waitFor('metrics listening');
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/internal/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('# TYPE tollgate_requests_total counter');
      expect((await fetch(`http://127.0.0.1:${port}/internal/metrics`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/v1/models`)).status).toBe(404);
    } finally {
      proc.kill();
      await proc.exited();
    }
  });
});

describe('graceful shutdown on SIGTERM', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  beforeAll(async () => {
    service = await startTrainingService();
    inference = await startInferenceHost();
  });
  afterAll(async () => {
    await Promise.all([service.close(), inference.close()]);
  });

  it('finishes an in-flight stream, refuses new connections, then exits 0', async () => {
    const port = await freePort();
    const proc = startGatewayProcess({
      TOLLGATE_CONFIG: writeTempConfig(configYaml(true)),
      PORT: String(port),
      SERVICE_URL: service.url,
      INFERENCE_URL: inference.url,
    });
    await proc.waitFor('tollgate listening');
    const { res, held } = await openHeldChat(port, { authorization: bearer(KEYS.teamA) }, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }), service);
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString()));

    proc.kill('SIGTERM');
    await proc.waitFor('draining');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();

    for (const event of held.rest) held.res.write(event);
    held.res.end();
    await once(res, 'end');
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await proc.exited()).toBe(0);
  });
});

describe('one shutdown deadline', () => {
  let service: FakeUpstream;
  beforeAll(async () => {
    service = await startTrainingService();
  });
  afterAll(async () => {
    await service.close();
  });

  it('fits draining and the ledger flush together in one shutdownGraceMs, even with the database gone', async () => {
    const database = await createTestDatabase();
    const { relay, url: databaseUrl } = await relayTo(database);
    const port = await freePort();
    const graceMs = 2000;
    const yaml = configYaml(true).replace('shutdownGraceMs: 5000', `shutdownGraceMs: ${graceMs}`) + `database: { url: "${databaseUrl}" }\n`;
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port), SERVICE_URL: service.url });
    try {
      await proc.waitFor('tollgate listening');
      // A stream that never ends by itself, and a database that will not take its ledger row.
      const { res } = await openHeldChat(port, { authorization: bearer(KEYS.teamA) }, JSON.stringify({ model: 'm', messages: [], stream: true }), service);
      res.resume();
      relay.stall();
      const signalledAt = Date.now();
      proc.kill('SIGTERM');
      expect(await proc.exited()).toBe(0);
      // Before: the grace period for in-flight requests, then a second one for the usage flush.
      expect(Date.now() - signalledAt).toBeLessThan(graceMs + 1400);
      expect(proc.output()).toContain('grace period over');
      // The stream cut at the deadline was still metered: its row is the one the database could not take.
      expect(proc.output()).toContain('usage ledger row dropped');
    } finally {
      proc.kill('SIGKILL');
      await relay.close();
      await database.drop();
    }
  });
});

describe('npm run keygen', () => {
  it('runs the compiled file with plain Node, as in the production image (no tsx there)', async () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.keygen).toBe('node dist/src/keys/keygen.js');
    const outDir = mkdtempSync(join(tmpdir(), 'tollgate-keygen-'));
    const tsc = resolve(ROOT, 'node_modules/typescript/bin/tsc');
    const options = ['--noCheck', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--rootDir', ROOT, '--outDir', outDir, '--types', 'node'];
    await promisify(execFile)(process.execPath, [tsc, ...options, resolve(ROOT, 'src/keys/keygen.ts')], { cwd: ROOT });
    const { stdout } = await promisify(execFile)(process.execPath, [join(outDir, 'src/keys/keygen.js'), '--team', 'team-a'], { cwd: outDir });
    expect(stdout).toMatch(/^API key \(shown once, store it now\):\n\n {2}tg-[A-Za-z0-9_-]{32}\n/);
  });

  it('is built without the benchmark, so the runtime image does not ship dist/bench', () => {
    const build = JSON.parse(readFileSync(resolve(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include).toEqual(['src']);
  });

  it('prints a key once and a YAML entry holding only its SHA-256', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/keys/keygen.ts', '--team', 'team-a', '--projects', 'prod,research', '--id', 'ci'], { cwd: ROOT });
    const key = /\n {2}(tg-[A-Za-z0-9_-]{32})\n/.exec(stdout)?.[1];
    expect(key).toBeDefined();
    const digest = createHash('sha256').update(key!).digest('hex');
    expect(stdout).toContain(`    - id: ci\n      sha256: "${digest}"\n      team: team-a\n      projects: ["prod", "research"]\n`);
    expect(stdout.split(key!)).toHaveLength(2);
  });

  it('refuses to run without --team', async () => {
    const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/keys/keygen.ts'], { cwd: ROOT }).catch((err: { code: number; stderr: string }) => err);
    expect((result as { code: number }).code).toBe(1);
    expect((result as { stderr: string }).stderr).toBe('keygen: --team <team> is required (1-128 of [A-Za-z0-9._-])\n');
  });
});
