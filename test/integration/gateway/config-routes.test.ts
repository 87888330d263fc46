import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { createGateway } from '../../../src/app.js';
import { loadConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream, type RecordedRequest } from '../../fixtures/training-service.js';
import { metricValue, startGateway, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

const MB = 1024 ** 2;
const LIMITED_KEY = 'tg-test-config-routes-limited-0001';
const admin = { authorization: bearer(KEYS.admin) };

/** The newer training API of SPEC 20, as docs/routes.md tells operators to add it. */
export const TRAINING_ROUTES = `routes:
  - { path: /v1/training/capabilities, methods: [GET], upstream: service, body: none, limited: false, ownership: unguarded }
  - { path: /v1/training/runs, methods: [POST], upstream: service, body: json, ownership: { creates: run } }
  - { path: "/v1/training/runs/{run_id}/*", methods: [GET, PUT, POST, DELETE], upstream: service, ownership: { checks: { param: run_id, kind: run } } }
  - { path: /v1/training/operations, methods: [POST], upstream: service, ownership: { checks-body: { field: run_id, kind: run }, creates: operation } }
  - { path: "/v1/training/operations/{operation_id}", methods: [GET], upstream: service, ownership: { checks: { param: operation_id, kind: operation } } }
`;

/** One upstream account shared by every team (`bearer`): ownership is on (SPEC 13). */
const yaml = (databasePath: string, serviceUrl: string, inferenceUrl: string, routes: string): string => `
server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 2000 }
upstreams:
  service: { url: "${serviceUrl}", timeoutMs: 5000, auth: { bearer: shared-account-key } }
  inference: { url: "${inferenceUrl}", timeoutMs: 5000 }
auth:
  keys: ${JSON.stringify([...KEY_ENTRIES, { id: 'limited', sha256: digest(LIMITED_KEY), team: 'team-l', limits: { rpm: 2 } }])}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
database: { path: "${databasePath}" }
logging: { level: silent }
${routes}`;

/** A PUT whose body is written chunk by chunk, honouring backpressure; `between` runs after the first chunk. */
async function streamedPut(port: number, path: string, key: string, chunk: Buffer, count: number, between: () => Promise<void>): Promise<{ res: IncomingMessage; body: string }> {
  const req = httpRequest({ host: '127.0.0.1', port, path, method: 'PUT', headers: { authorization: bearer(key), 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } });
  const response = once(req, 'response') as Promise<[IncomingMessage]>;
  req.flushHeaders();
  const [socket] = (await once(req, 'socket')) as [Socket];
  if (socket.connecting) await once(socket, 'connect');
  req.write(chunk);
  await between();
  for (let i = 1; i < count; i += 1) if (!req.write(chunk)) await once(req, 'drain');
  req.end();
  const [res] = await response;
  let body = '';
  for await (const part of res) body += String(part);
  return { res, body };
}

describe('routes from the configuration (SPEC 20): the newer training API', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let path: string;
  const databasePath = tempDatabasePath();

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    path = writeTempConfig(yaml(databasePath, service.url, inference.url, TRAINING_ROUTES));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const as = (key: string) => ({ authorization: bearer(key) });
  const createRun = async (key: string): Promise<string> => {
    const res = await request(gw.url).post('/v1/training/runs').set(as(key)).send({ base_model: 'Qwen/Qwen2.5-14B-Instruct', name: 'agent' });
    expect(res.status).toBe(200);
    return (res.body as { id: string }).id;
  };

  it('logs a warning at start-up naming each unguarded route to the service while ownership is on', async () => {
    const lines: Array<{ level: number; route?: string; msg: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; route?: string; msg: string }) });
    const own = writeTempConfig(yaml(tempDatabasePath(), service.url, inference.url, TRAINING_ROUTES));
    const gateway = await createGateway(loadConfig(own), { logger });
    await gateway.close();
    expect(lines.filter((l) => l.route !== undefined)).toEqual([
      expect.objectContaining({ level: 40, route: 'GET /v1/training/capabilities', msg: 'route GET /v1/training/capabilities is unguarded: ownership is on, and the gateway checks no resource on it' }),
    ]);
  });

  it('streams a 5 MB PUT under a run byte for byte, to the upstream before the client has finished sending', async () => {
    const run = await createRun(KEYS.teamA);
    const chunk = Buffer.alloc(64 * 1024, 7);
    for (let i = 0; i < chunk.length; i += 251) chunk[i] = i % 256;
    const count = (5 * MB) / chunk.length;
    const expected = createHash('sha256');
    for (let i = 0; i < count; i += 1) expected.update(chunk);
    const started = service.started;
    const reached = new Promise<void>((resolve) => service.server.once('request', () => resolve()));
    // Only the first 64 KiB has been sent when the upstream gets the request: nothing holds the body back.
    const { res, body } = await streamedPut(gw.port, `/v1/training/runs/${run}/checkpoints/step-1?part=1`, KEYS.teamA, chunk, count, () => reached);
    expect(res.statusCode).toBe(201);
    expect(JSON.parse(body)).toEqual({ run_id: run, name: 'step-1', bytes: 5 * MB, sha256: expected.digest('hex') });
    expect(service.started).toBe(started + 1);
    const last = service.last;
    expect([last.method, last.url, last.headers.authorization]).toEqual(['PUT', `/v1/training/runs/${run}/checkpoints/step-1?part=1`, 'Bearer shared-account-key']);
  });

  it('refuses an upload declared over server.streamBodyLimit with 413, forwarding nothing', async () => {
    const run = await createRun(KEYS.teamA);
    const started = service.started;
    const req = httpRequest({ host: '127.0.0.1', port: gw.port, path: `/v1/training/runs/${run}/checkpoints/huge`, method: 'PUT', headers: { authorization: bearer(KEYS.teamA), 'content-length': String(300 * MB) } });
    req.on('error', () => undefined);
    req.flushHeaders();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let body = '';
    for await (const part of res) body += String(part);
    req.destroy();
    expect([res.statusCode, (JSON.parse(body) as { error: { code: string } }).error.code]).toEqual([413, 'request_too_large']);
    expect(service.started).toBe(started);
  });

  it('answers 405 with Allow for a method the route does not name, and 404 for a path no route knows', async () => {
    const run = await createRun(KEYS.teamA);
    const before = service.requests.length;
    const patch = await request(gw.url).patch(`/v1/training/runs/${run}/notes`).set(as(KEYS.teamA)).send({});
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe('GET, PUT, POST, DELETE');
    expect(patch.body.error).toEqual({ message: `PATCH is not allowed on /v1/training/runs/{run_id}/*; use GET, PUT, POST, DELETE.`, type: 'invalid_request_error', param: null, code: 'method_not_allowed' });
    const get = await request(gw.url).get('/v1/training/runs').set(as(KEYS.teamA));
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    expect((await request(gw.url).get('/v1/training/elsewhere').set(as(KEYS.teamA))).status).toBe(404);
    expect(service.requests.length).toBe(before);
  });

  it('refuses encoded slashes and dot segments in a parameter with 400, forwarding nothing', async () => {
    const before = service.requests.length;
    for (const bad of ['/v1/training/runs/a%2Fb/log', '/v1/training/runs/%2e%2e/log', '/v1/training/operations/..']) {
      const res = await request(gw.url).get(bad).set(as(KEYS.teamA));
      expect([bad, res.status, res.body.error.code]).toEqual([bad, 400, 'invalid_path']);
    }
    expect(service.requests.length).toBe(before);
  });

  it('limits a config route like a built-in one, and writes ledger rows and metrics under its template', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await request(gw.url).post('/v1/training/runs').set(as(LIMITED_KEY)).send({ name: `r${i}` })).status);
    expect(statuses).toEqual([200, 200, 429]);
    await gw.gateway.settled();
    const rows = await request(gw.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&team=team-l`).set(admin);
    // Rows of one millisecond come in id order: compared as a set, by status.
    const seen = (rows.body.data as Array<Record<string, unknown>>).map((r) => [r.route, r.method, r.status, r.model, r.total_tokens]).sort((x, y) => Number(x[2]) - Number(y[2]));
    expect(seen).toEqual([
      ['/v1/training/runs', 'POST', 200, 'POST /v1/training/runs', 0],
      ['/v1/training/runs', 'POST', 200, 'POST /v1/training/runs', 0],
      ['/v1/training/runs', 'POST', 429, 'POST /v1/training/runs', 0],
    ]);
    expect(await metricValue(gw.url, 'tollgate_requests_total{route="/v1/training/runs",method="POST",upstream="service",status="429"}')).toBe(1);
    // `limited: false`: no rate-limit headers, no ledger row.
    const caps = await request(gw.url).get('/v1/training/capabilities').set(as(LIMITED_KEY));
    expect([caps.status, caps.headers['x-ratelimit-limit-requests']]).toEqual([200, undefined]);
  });

  it('keeps each team to its own runs and operations on a shared account: creates, checks, checks-body', async () => {
    const runA = await createRun(KEYS.teamA);
    const runB = await createRun(KEYS.teamB);
    const before = service.requests.length;
    const other = await request(gw.url).get(`/v1/training/runs/${runA}`).set(as(KEYS.teamB));
    expect(other.status).toBe(404);
    expect(other.body.error).toEqual({ message: `No run "${runA}" was found for this team.`, type: 'not_found_error', param: 'run_id', code: 'resource_not_found' });
    const unknown = await request(gw.url).delete('/v1/training/runs/run_never_made/checkpoints/x').set(as(KEYS.teamA));
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'resource_not_found']);
    // checks-body: the run named in the body must be the caller's; nothing reaches the upstream otherwise.
    const foreignOp = await request(gw.url).post('/v1/training/operations').set(as(KEYS.teamB)).send({ type: 'train_step', run_id: runA });
    expect([foreignOp.status, foreignOp.body.error.param, foreignOp.body.error.code]).toEqual([404, 'run_id', 'resource_not_found']);
    const noField = await request(gw.url).post('/v1/training/operations').set(as(KEYS.teamB)).send({ type: 'train_step' });
    expect(noField.body.error).toEqual({ message: 'The body has no top-level "run_id".', type: 'invalid_request_error', param: 'run_id', code: 'invalid_request' });
    const twice = await request(gw.url).post('/v1/training/operations').set(as(KEYS.teamB)).set('content-type', 'application/json').send(`{"run_id":"${runB}","run_id":"${runA}"}`);
    expect([twice.status, twice.body.error.param]).toEqual([400, 'run_id']);
    expect(service.requests.length).toBe(before);
    const op = await request(gw.url).post('/v1/training/operations').set(as(KEYS.teamB)).send({ type: 'train_step', run_id: runB });
    expect([op.status, op.body.run_id]).toEqual([202, runB]);
    const opId = (op.body as { id: string }).id;
    expect((await request(gw.url).get(`/v1/training/operations/${opId}`).set(as(KEYS.teamB))).status).toBe(200);
    expect((await request(gw.url).get(`/v1/training/operations/${opId}`).set(as(KEYS.teamA))).status).toBe(404);
    expect((await request(gw.url).get(`/v1/training/runs/${runB}/metrics`).set(as(KEYS.teamB))).body).toEqual({ run_id: runB, method: 'GET', rest: '/metrics' });
    // The registry holds the new kinds like models and jobs: listed and adopted through the admin API.
    const listed = await request(gw.url).get('/admin/resources?kind=operation').set(admin);
    expect(listed.body.data.map((r: { id: string; team: string }) => [r.id, r.team])).toEqual([[opId, 'team-b']]);
    const adopted = await request(gw.url).put(`/admin/resources/run/${runA}`).set(admin).send({ team: 'team-b', project: 'default' });
    expect([adopted.status, adopted.body.kind, adopted.body.team]).toEqual([200, 'run', 'team-b']);
    expect((await request(gw.url).get(`/v1/training/runs/${runA}`).set(as(KEYS.teamB))).status).toBe(200);
    expect(await metricValue(gw.url, 'tollgate_ownership_denials_total{kind="operation"}')).toBe(1);
  });

  it('refuses a reload whose routes are not valid with 400 invalid_config, and keeps the running table', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/preview/*', 'routes[0].path: overlaps the built-in route /v1/preview/models'],
      ['/v2/training/runs', 'routes[0].path: must start with /v1/ (config routes live under /v1)'],
      ['/v1/training/../admin', 'routes[0].path: must not contain a "." or ".." segment'],
    ];
    for (const [template, message] of cases) {
      writeFileSync(path, yaml(databasePath, service.url, inference.url, `routes:\n  - { path: "${template}", methods: [GET], upstream: service, ownership: unguarded }\n`));
      const res = await request(gw.url).post('/admin/config/reload').set(admin);
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'invalid_config', `${path}: ${message}`]);
    }
    writeFileSync(path, yaml(databasePath, service.url, inference.url, `routes:\n  - { path: /v1/training/x, methods: [GET], upstream: elsewhere }\n`));
    const unknownUpstream = await request(gw.url).post('/admin/config/reload').set(admin);
    expect(unknownUpstream.body.error.message).toBe(`${path}: routes[0].upstream: unknown upstream "elsewhere" (configured: service, inference)`);
    writeFileSync(path, yaml(databasePath, service.url, inference.url, `routes:\n  - { path: /v1/training/x, methods: [GET], upstream: service }\n`));
    const unguarded = await request(gw.url).post('/admin/config/reload').set(admin);
    expect(unguarded.body.error.message).toMatch(new RegExp(`^${path}: routes\\[0\\]\\.ownership: ownership is on: a route to the service must say how it is guarded`));
    expect((await request(gw.url).get('/v1/training/capabilities').set(as(KEYS.teamA))).status).toBe(200);
    writeFileSync(path, yaml(databasePath, service.url, inference.url, TRAINING_ROUTES));
  });

  it('adds a route on reload while requests run: none fails, and the new route answers once the reload has', async () => {
    const run = await createRun(KEYS.teamA);
    const added = `${TRAINING_ROUTES}  - { path: /v1/training/quotas, methods: [GET], upstream: service, body: none, ownership: unguarded }\n`;
    expect((await request(gw.url).get('/v1/training/quotas').set(as(KEYS.teamA))).status).toBe(404);
    let stop = false;
    const statuses: number[] = [];
    const load = Array.from({ length: 4 }, async () => {
      while (!stop) statuses.push((await request(gw.url).get(`/v1/training/runs/${run}/status`).set(as(KEYS.teamA))).status);
    });
    // Requests are running when the reload comes.
    await new Promise<void>((resolve) => {
      const seen = (r: RecordedRequest): void => {
        if (!r.url.includes('/status')) return;
        service.off('request', seen);
        resolve();
      };
      service.on('request', seen);
    });
    writeFileSync(path, yaml(databasePath, service.url, inference.url, added));
    const reloaded = await request(gw.url).post('/admin/config/reload').set(admin);
    expect([reloaded.status, reloaded.body.changed]).toEqual([200, ['routes']]);
    const quotas = await request(gw.url).get('/v1/training/quotas').set(as(KEYS.teamA));
    stop = true;
    await Promise.all(load);
    expect(quotas.status).toBe(200);
    expect(service.requests.filter((r) => r.url === '/v1/training/quotas').length).toBe(1);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});
