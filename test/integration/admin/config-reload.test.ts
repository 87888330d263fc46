import { readFileSync, writeFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { loadConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { startGatewayProcess, writeTempConfig } from '../../helpers/process.js';
import { freePort } from '../../helpers/ports.js';
import { openHeldChat } from '../../helpers/raw-http.js';
import { eventually } from '../../helpers/wait.js';

const admin = { authorization: bearer(KEYS.admin) };
const NEW_KEY = 'tg-test-reloaded-key-0123456789ab';

interface Variant {
  readonly serviceUrl: string;
  readonly keys?: ReadonlyArray<Record<string, unknown>>;
  readonly rpm?: number;
  readonly leaseMs?: number;
  readonly extra?: string;
}

/** A config file for the test gateway (the same database file across versions). */
const yaml = (databasePath: string, inferenceUrl: string, v: Variant): string => `
server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 2000 }
upstreams:
  service: { url: "${v.serviceUrl}", timeoutMs: 2000 }
  inference: { url: "${inferenceUrl}", timeoutMs: 2000 }
auth:
  keys: ${JSON.stringify(v.keys ?? KEY_ENTRIES)}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
rateLimits:
  projects: { "team-a/*": { rpm: ${v.rpm ?? 1000} } }
${v.leaseMs === undefined ? '' : `  concurrencyLeaseMs: ${v.leaseMs}\n`}database: { path: "${databasePath}" }
logging: { level: silent }
${v.extra ?? ''}`;

/** SPEC 12.2: POST /admin/config/reload (and SIGHUP) re-read the file and apply it to new requests. */
describe('config reload', () => {
  let first: FakeUpstream;
  let second: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let path: string;
  let write: (v: Variant) => void;
  const databasePath = tempDatabasePath();

  beforeAll(async () => {
    [first, second, inference] = await Promise.all([startTrainingService(), startTrainingService(), startInferenceHost()]);
    path = writeTempConfig(yaml(databasePath, inference.url, { serviceUrl: first.url }));
    write = (v) => writeFileSync(path, yaml(databasePath, inference.url, v));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([first.close(), second.close(), inference.close()]);
  });

  const reload = () => request(gw.url).post('/admin/config/reload').set(admin);
  const health = (key: string) => request(gw.url).get('/v1/health').set('authorization', bearer(key));
  const models = (key: string) => request(gw.url).get('/v1/models').set('authorization', bearer(key));

  it('applies a new key list, a new limit and a new upstream URL to new requests', async () => {
    expect((await health(NEW_KEY)).status).toBe(401);
    write({ serviceUrl: second.url, rpm: 5, keys: [...KEY_ENTRIES, { id: 'reloaded', sha256: digest(NEW_KEY), team: 'team-a' }] });
    const res = await reload();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'reloaded', changed: ['upstreams.service', 'auth.keys', 'rateLimits.projects'], restartRequired: [] });
    expect((await health(NEW_KEY)).status).toBe(200);
    expect(second.last.url).toBe('/v1/health');
    expect((await models(KEYS.teamA)).headers['x-ratelimit-limit-requests']).toBe('5');
  });

  it('answers 400 invalid_config with the start-up message and changes nothing', async () => {
    const before = second.requests.length;
    writeFileSync(path, 'upstreams: {service: {url: "ftp://nope"}, inference: {url: "http://b"}}\n');
    const res = await reload();
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: `${path}: upstreams.service.url: must be an http:// or https:// URL`, type: 'invalid_request_error', param: null, code: 'invalid_config' },
    });
    expect((await health(NEW_KEY)).status).toBe(200);
    expect(second.requests.length).toBe(before + 1);
  });

  it('lists settings only a restart applies, and leaves them as they were', async () => {
    write({ serviceUrl: second.url, rpm: 5, keys: [...KEY_ENTRIES, { id: 'reloaded', sha256: digest(NEW_KEY), team: 'team-a' }], leaseMs: 60_000, extra: 'redis: { url: "redis://127.0.0.1:1" }\nmetrics: { port: 9999 }\n' });
    const res = await reload();
    const restartOnly = ['rateLimits.concurrencyLeaseMs', 'redis.url', 'metrics.port'];
    expect(res.body).toEqual({ status: 'reloaded', changed: restartOnly, restartRequired: restartOnly });
    expect(gw.gateway.config.rateLimits.concurrencyLeaseMs).toBe(30_000);
    expect(gw.gateway.config.redis.url).toBe('');
    expect(gw.gateway.config.metrics.port).toBeNull();
    expect((await health(KEYS.teamA)).status).toBe(200);
  });

  it('lets a stream in flight finish on the upstream it started with', async () => {
    write({ serviceUrl: second.url });
    await reload().expect(200);
    const { res, held } = await openHeldChat(gw.port, { authorization: bearer(KEYS.teamA) }, JSON.stringify({ model: 'm', messages: [], stream: true }), second);
    let body = '';
    res.on('data', (chunk: Buffer) => (body += chunk.toString()));
    write({ serviceUrl: first.url });
    await reload().expect(200);
    for (const event of held.rest) held.res.write(event);
    held.res.end();
    await new Promise((resolve) => res.once('end', resolve));
    expect(res.statusCode).toBe(200);
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect((await health(KEYS.teamA)).status).toBe(200);
    expect(first.last.url).toBe('/v1/health');
  });

  it('counts reloads by result and records each in the audit log', async () => {
    const metrics = (await request(gw.url).get('/metrics')).text;
    expect(metrics).toContain('tollgate_config_reloads_total{result="ok"} 4');
    expect(metrics).toContain('tollgate_config_reloads_total{result="error"} 1');
    await gw.gateway.settled();
    const today = utcDay();
    const audit = await request(gw.url).get(`/admin/audit?from=${today}&to=${today}&action=config.reload`).set(admin);
    expect((audit.body.data as Array<{ actor: string; target: string; result: string }>).map((e) => [e.actor, e.target, e.result])).toEqual([
      ['ops', 'config', 'ok'],
      ['ops', 'config', 'invalid_config'],
      ['ops', 'config', 'ok'],
      ['ops', 'config', 'ok'],
      ['ops', 'config', 'ok'],
    ]);
  });

  it('records a reload with the admin key’s role and the request’s id', async () => {
    const res = await reload();
    expect(res.status).toBe(200);
    const requestId = res.headers['x-request-id'] as string;
    await gw.gateway.settled();
    const today = utcDay();
    const audit = await request(gw.url).get(`/admin/audit?from=${today}&to=${today}&action=config.reload`).set(admin);
    const entry = (audit.body.data as Array<Record<string, unknown>>).find((e) => e.requestId === requestId);
    expect(entry).toMatchObject({ actor: 'ops', actorRole: 'admin', action: 'config.reload', target: 'config', result: 'ok', requestId });
  });

  it('answers GET /admin/config with a query parameter 400 invalid_query naming it', async () => {
    const res = await request(gw.url).get('/admin/config?verbose=1').set(admin);
    expect([res.status, res.body]).toEqual([
      400,
      { error: { message: 'Unknown query parameter "verbose"; /admin/config takes none.', type: 'invalid_request_error', param: 'verbose', code: 'invalid_query' } },
    ]);
  });
});

describe('SIGHUP', () => {
  it('reloads the config file of a running gateway process', async () => {
    const service = await startTrainingService();
    const port = await freePort();
    const base = `server: { host: 127.0.0.1 }\nupstreams: { service: { url: "${service.url}" }, inference: { url: "${service.url}" } }\n`;
    const path = writeTempConfig(`${base}auth: { keys: ${JSON.stringify(KEY_ENTRIES)} }\n`);
    const databaseLine = /\ndatabase: .*\n/.exec(readFileSync(path, 'utf8'))?.[0] ?? '';
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(port) });
    try {
      await proc.waitFor('tollgate listening');
      const call = async (): Promise<number> => (await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: { authorization: bearer(NEW_KEY) } })).status;
      expect(await call()).toBe(401);
      writeFileSync(path, `${base}auth: { keys: ${JSON.stringify([{ id: 'reloaded', sha256: digest(NEW_KEY), team: 'team-a' }])} }${databaseLine}`);
      proc.kill('SIGHUP');
      await proc.waitFor('configuration reloaded');
      await eventually(async () => (await call()) === 200);
    } finally {
      proc.kill('SIGKILL');
      await proc.exited();
      await service.close();
    }
  });
});

/** `metering.ledger.enabled: false` writes no usage rows (limits still count); a reload turns it back on. */
describe('the usage ledger switched by a reload', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let path: string;
  const databasePath = tempDatabasePath();
  const off = 'metering: { ledger: { enabled: false } }\n';

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    path = writeTempConfig(yaml(databasePath, inference.url, { serviceUrl: service.url, rpm: 100, extra: off }));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const chat = () =>
    request(gw.url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(KEYS.teamA))
      .set('OpenAI-Project', 'team-a/prod')
      .set('content-type', 'application/json')
      .set('x-fixture-usage', '30,12')
      .send(JSON.stringify({ model: 'qwen-14b', messages: [{ role: 'user', content: 'hi' }] }));
  const rows = async (): Promise<number[]> => {
    await gw.gateway.settled();
    const today = utcDay();
    const res = await request(gw.url).get(`/admin/usage/requests?from=${today}&to=${today}`).set(admin);
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ total_tokens: number }>).map((row) => row.total_tokens);
  };

  it('answers and counts limits with no ledger row; after a reload with it on, each request has its row', async () => {
    const first = await chat();
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('99');
    expect(await rows()).toEqual([]);
    writeFileSync(path, yaml(databasePath, inference.url, { serviceUrl: service.url, rpm: 100 }));
    const res = await request(gw.url).post('/admin/config/reload').set(admin);
    expect(res.body).toEqual({ status: 'reloaded', changed: ['metering.ledger'], restartRequired: [] });
    const second = await chat();
    expect(second.headers['x-ratelimit-remaining-requests']).toBe('98');
    expect(await rows()).toEqual([42]);
  });
});
