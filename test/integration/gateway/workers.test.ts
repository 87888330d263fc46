import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { ADMIN_ENTRIES, KEY_ENTRIES, KEYS, bearer } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig, type GatewayProcess } from '../../helpers/process.js';
import { openHeldChat } from '../../helpers/raw-http.js';
import { REPLY_SILENCE_MS, startRedis, type TestRedis } from '../../helpers/redis.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request on a connection of its own: the primary hands each new connection to the next worker. */
function send(port: number, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const limitsYaml = (rpm: number) => {
  const keys = KEY_ENTRIES.map((entry) => (entry.id === 'team-a-bot' ? { ...entry, limits: { rpm } } : entry));
  return `
server: { host: 127.0.0.1, port: 8080, shutdownGraceMs: 5000, workers: 2 }
redis: { url: "\${REDIS_URL}", commandTimeoutMs: ${REPLY_SILENCE_MS} }
upstreams:
  service: { url: "\${SERVICE_URL}" }
  inference: { url: "\${INFERENCE_URL}" }
auth:
  keys: ${JSON.stringify(keys)}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
`;
};

/** The pid of the worker that logged the request `requestId` (each worker's lines carry its pid). */
async function workerOf(proc: GatewayProcess, answer: Answer): Promise<number> {
  const requestId = String(answer.headers['x-request-id']);
  await proc.waitFor(`"requestId":"${requestId}"`);
  const line = proc.output().split('\n').find((l) => l.includes(`"requestId":"${requestId}"`) && l.includes('"msg":"request"'));
  return (JSON.parse(line!) as { pid: number }).pid;
}

/** The pids the primary logged once every worker listened. */
function workerPids(proc: GatewayProcess): number[] {
  const line = proc.output().split('\n').find((l) => l.includes('"msg":"workers listening"'));
  return (JSON.parse(line!) as { pids: number[] }).pids;
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;


// Three processes start per test (a primary and two workers through tsx): slow on a shared 2-core machine.
describe('server.workers: 2 — one port, two processes', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let proc: GatewayProcess | undefined;
  let port: number;

  beforeAll(async () => {
    [redis, service, inference] = await Promise.all([startRedis(), startTrainingService(), startInferenceHost()]);
  });
  afterAll(async () => {
    await Promise.all([service.close(), inference.close(), redis.stop()]);
  });
  afterEach(async () => {
    proc?.kill('SIGKILL');
    await proc?.exited();
    proc = undefined;
  });

  async function start(yaml: string): Promise<string> {
    port = await freePort();
    const path = writeTempConfig(yaml);
    proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(port), REDIS_URL: redis.url, SERVICE_URL: service.url, INFERENCE_URL: inference.url });
    await proc.waitFor('"msg":"workers listening"');
    return path;
  }

  const models = (key: string) => send(port, 'GET', '/v1/models', { authorization: bearer(key) });

  it('keeps a limit exact across both workers: rpm 10 serves 10 requests, then 429', async () => {
    await start(limitsYaml(10));
    const answers: Answer[] = [];
    for (let i = 0; i < 12; i += 1) answers.push(await models(KEYS.teamA));
    expect(answers.map((a) => a.status)).toEqual([...Array<number>(10).fill(200), 429, 429]);
    const pids = new Set(await Promise.all(answers.map((a) => workerOf(proc!, a))));
    expect(pids).toEqual(new Set(workerPids(proc!)));
  });

  it('answers /metrics for both workers together: request counts equal the requests sent', async () => {
    await start(limitsYaml(1000));
    const answers: Answer[] = [];
    for (let i = 0; i < 7; i += 1) answers.push(await models(KEYS.teamB));
    expect(new Set(await Promise.all(answers.map((a) => workerOf(proc!, a))))).toEqual(new Set(workerPids(proc!)));
    // Two scrapes on two connections: each worker answers one, both with the sum.
    for (const scrape of [await send(port, 'GET', '/metrics'), await send(port, 'GET', '/metrics')]) {
      expect(scrape.status).toBe(200);
      expect(scrape.body).toMatch(/^tollgate_requests_total\{route="\/v1\/models",method="GET",upstream="inference",status="200"\} 7$/m);
      expect(scrape.body).toMatch(/^tollgate_client_connections_max \d+$/m);
    }
  });

  it('fans a SIGHUP out to every worker: the changed limit is what each of them applies', async () => {
    const path = await start(limitsYaml(100));
    expect((await models(KEYS.teamA)).headers['x-ratelimit-limit-requests']).toBe('100');
    writeFileSync(path, limitsYaml(50) + `database: { path: "${path.replace(/config\.yaml$/, 'tollgate.db')}" }\n`);
    proc!.child.kill('SIGHUP');
    await proc!.waitFor('"msg":"configuration reloaded"', 2);
    const answers = [await models(KEYS.teamA), await models(KEYS.teamA), await models(KEYS.teamA)];
    expect(answers.map((a) => a.headers['x-ratelimit-limit-requests'])).toEqual(['50', '50', '50']);
    expect(new Set(await Promise.all(answers.map((a) => workerOf(proc!, a))))).toEqual(new Set(workerPids(proc!)));
    // One reload, counted (and audited) once, though both workers applied it.
    expect((await send(port, 'GET', '/metrics')).body).toMatch(/^tollgate_config_reloads_total\{result="ok"\} 1$/m);
  });

  it('fans POST /admin/config/reload out from the worker that took it to the other', async () => {
    const path = await start(limitsYaml(100));
    writeFileSync(path, limitsYaml(40) + `database: { path: "${path.replace(/config\.yaml$/, 'tollgate.db')}" }\n`);
    const reload = await send(port, 'POST', '/admin/config/reload', { authorization: bearer(KEYS.admin) });
    expect(reload.status).toBe(200);
    await proc!.waitFor('"msg":"configuration reloaded"', 2);
    const answers = [await models(KEYS.teamA), await models(KEYS.teamA), await models(KEYS.teamA)];
    expect(answers.map((a) => a.headers['x-ratelimit-limit-requests'])).toEqual(['40', '40', '40']);
    expect(new Set(await Promise.all(answers.map((a) => workerOf(proc!, a))))).toEqual(new Set(workerPids(proc!)));
    expect((await send(port, 'GET', '/metrics')).body).toMatch(/^tollgate_config_reloads_total\{result="ok"\} 1$/m);
  });

  it('serves a key created through one worker from the other within 1 s (one SQLite file)', async () => {
    await start(limitsYaml(1000));
    const created = await send(port, 'POST', '/admin/keys', { authorization: bearer(KEYS.admin), 'content-type': 'application/json' }, JSON.stringify({ team: 'team-c' }));
    expect(created.status).toBe(201);
    const { key } = JSON.parse(created.body) as { key: string };
    const deadline = Date.now() + 1000;
    const served = new Set<number>();
    while (served.size < 2) {
      const answer = await models(key);
      if (answer.status === 200) served.add(await workerOf(proc!, answer));
      else expect(Date.now(), 'a worker still refuses the new key after 1 s').toBeLessThan(deadline);
    }
    expect(served).toEqual(new Set(workerPids(proc!)));
  });

  it('drains every worker on SIGTERM: an in-flight stream completes, then the primary exits 0', async () => {
    await start(limitsYaml(1000));
    const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const { res, held } = await openHeldChat(port, { authorization: bearer(KEYS.teamA) }, chat, service);
    let body = '';
    res.on('data', (chunk: Buffer) => (body += chunk.toString()));
    proc!.child.kill('SIGTERM');
    await proc!.waitFor('"msg":"draining"', 2);
    for (const event of held.rest) held.res.write(event);
    held.res.end();
    await once(res, 'end');
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await proc!.exited()).toBe(0);
    expect(count(proc!.output(), '"msg":"stopped"')).toBe(3);
  });

  it('replaces a worker killed with -9, and keeps serving', async () => {
    await start(limitsYaml(1000));
    const [victim, survivor] = workerPids(proc!) as [number, number];
    process.kill(victim, 'SIGKILL');
    await proc!.waitFor('"msg":"worker exited: replacing it"');
    await proc!.waitFor('"msg":"worker ready"', 3);
    const answers = [await models(KEYS.teamB), await models(KEYS.teamB), await models(KEYS.teamB)];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const pids = new Set(await Promise.all(answers.map((a) => workerOf(proc!, a))));
    expect(pids.size).toBe(2);
    expect(pids).toContain(survivor);
    expect(pids).not.toContain(victim);
  });
});

describe('server.workers: a worker that cannot start', { timeout: 60_000 }, () => {
  it('stops the start: the primary exits 1 rather than replace workers that would die the same way', async () => {
    const yaml = 'server: { workers: 2 }\nredis: { url: "redis://127.0.0.1:9" }\nupstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nauth: {jwt: {publicKey: "not a key", algorithms: [RS256]}}\n';
    const path = writeTempConfig(yaml);
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(await freePort()) });
    expect(await proc.exited()).toBe(1);
    expect(proc.output()).toContain(`tollgate: ${path}: auth.jwt.publicKey: not a PEM public key usable with RS256`);
    expect(proc.output()).toContain('"msg":"a worker exited during start-up: stopping"');
    expect(proc.output()).not.toContain('replacing it');
  });
});

describe('server.workers with the memory store', () => {
  it('is refused at start-up with one line: limits would not be exact', async () => {
    const path = writeTempConfig('server: { workers: 2 }\nupstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\n');
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(await freePort()) });
    expect(await proc.exited()).toBe(1);
    expect(proc.output()).toBe(`tollgate: ${path}: server.workers: 2 (2 processes) needs redis.url or redis.cluster: with the memory store each worker would count limits on its own\n`);
  });
});
