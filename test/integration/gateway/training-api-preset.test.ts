import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { loadConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingApiService, type FakeUpstream, type TrainingApiService } from '../../fixtures/training-api-service.js';
import { metricValue, startGateway, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

const PRESET = resolve('config/presets/training-api.yaml');
const POLLER_KEY = 'tg-test-training-poller-000000001';
const admin = { authorization: bearer(KEYS.admin) };
const as = (key: string) => ({ authorization: bearer(key) });

/** One upstream account shared by every team (`bearer`): ownership is on; the preset included as docs/routes.md says. */
const yaml = (databasePath: string, serviceUrl: string, inferenceUrl: string, include = PRESET): string => `
server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 2000 }
upstreams:
  service: { url: "${serviceUrl}", timeoutMs: 5000, auth: { bearer: shared-account-key } }
  inference: { url: "${inferenceUrl}", timeoutMs: 5000 }
auth:
  keys: ${JSON.stringify([...KEY_ENTRIES, { id: 'poller', sha256: digest(POLLER_KEY), team: 'team-p', limits: { rpm: 300 } }])}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
database: { path: "${databasePath}" }
logging: { level: silent }
include: ["${include}"]
`;

interface Json {
  [key: string]: unknown;
}

describe('the training-api preset (SPEC 23) against the newer training service, two teams on one account', () => {
  let service: TrainingApiService;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let configPath: string;
  const databasePath = tempDatabasePath();

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingApiService(), startInferenceHost()]);
    configPath = writeTempConfig(yaml(databasePath, service.url, inference.url));
    gw = await startGateway(loadConfig(configPath), configPath);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const post = async (key: string, path: string, body: unknown = {}) => request(gw.url).post(path).set(as(key)).send(body as object);
  const get = async (key: string, path: string) => request(gw.url).get(path).set(as(key));
  const createRun = async (key: string, name: string): Promise<string> => {
    const res = await post(key, '/v1/training/runs', { name, base_model: 'Qwen/Qwen2.5-7B-Instruct' });
    expect([res.status, res.body.name]).toEqual([201, name]);
    return res.body.run_id as string;
  };
  /** Polls an operation as the client does, until it is done: it finishes after POLLS_TO_FINISH polls. */
  const pollUntilDone = async (key: string, operationId: string): Promise<Json> => {
    for (;;) {
      const res = await get(key, `/v1/training/operations/${operationId}`);
      expect(res.status).toBe(200);
      if (res.body.done === true) return res.body as Json;
    }
  };

  /** One team's whole session: every endpoint of the preset, on its own run. Answers the ids it made. */
  async function session(key: string, name: string): Promise<{ run: string; step: string; saved: string; cancelled: string }> {
    const run = await createRun(key, name);
    const upload = await request(gw.url).post(`/v1/training/runs/${run}/data`).set(as(key)).set('content-type', 'application/jsonl').send('{"messages":[]}\n{"messages":[]}\n');
    expect([upload.status, upload.body.bytes]).toEqual([200, 32]);
    const step = await post(key, `/v1/training/runs/${run}/optim_step`, { learning_rate: 1e-5 });
    expect([step.status, step.body.status]).toEqual([202, 'running']);
    expect(await pollUntilDone(key, step.body.operation_id)).toMatchObject({ status: 'succeeded', run_id: run });
    expect((await get(key, `/v1/training/operations/${step.body.operation_id}/result`)).body).toEqual({ operation_id: step.body.operation_id, result: { step: 1, loss: 0.42 } });
    const saved = await post(key, `/v1/training/runs/${run}/save_state`);
    await pollUntilDone(key, saved.body.operation_id);
    expect((await get(key, `/v1/training/runs/${run}/checkpoints`)).body.data).toEqual([{ checkpoint_id: `${run}-ckpt-1`, step: 1 }]);
    // Events with cursors: the first page, then nothing after its cursor.
    const events = await get(key, `/v1/training/runs/${run}/events?after=0&limit=2`);
    expect(events.body.data.map((e: Json) => e.type)).toEqual(['data_uploaded', 'optim_step']);
    const rest = await get(key, `/v1/training/runs/${run}/events?after=${events.body.next_cursor}`);
    expect([rest.body.data.map((e: Json) => e.type), rest.body.has_more]).toEqual([['save_state'], false]);
    const doomed = await post(key, `/v1/training/runs/${run}/optim_step`);
    const cancel = await post(key, `/v1/training/operations/${doomed.body.operation_id}:cancel`);
    expect([cancel.status, cancel.body.status]).toEqual([200, 'cancelled']);
    expect((await get(key, `/v1/training/runs/${run}`)).body).toMatchObject({ run_id: run, status: 'active' });
    // A taken name is the service's 409; the client then resolves the name to its run.
    expect((await post(key, '/v1/training/runs', { name })).status).toBe(409);
    const resolved = await post(key, '/v1/training/runs:resolve', { name });
    expect([resolved.status, resolved.body.run_id]).toEqual([200, run]);
    const closed = await post(key, `/v1/training/runs/${run}:close`);
    expect([closed.status, closed.body.status]).toEqual([200, 'closed']);
    return { run, step: step.body.operation_id, saved: saved.body.operation_id, cancelled: doomed.body.operation_id };
  }

  /** Every endpoint of the preset that names a run or an operation, on these ones. */
  const endpointsOf = (ids: { run: string; step: string }): Array<[string, string]> => [
    ['GET', `/v1/training/runs/${ids.run}`],
    ['POST', `/v1/training/runs/${ids.run}:close`],
    ['POST', `/v1/training/runs/${ids.run}%3Aclose`],
    ['POST', `/v1/training/runs/${ids.run}/data`],
    ['POST', `/v1/training/runs/${ids.run}/optim_step`],
    ['POST', `/v1/training/runs/${ids.run}/save_state`],
    ['GET', `/v1/training/runs/${ids.run}/checkpoints`],
    ['GET', `/v1/training/runs/${ids.run}/events?after=0`],
    ['GET', `/v1/training/operations/${ids.step}`],
    ['GET', `/v1/training/operations/${ids.step}/result`],
    ['POST', `/v1/training/operations/${ids.step}:cancel`],
    ['POST', `/v1/training/operations/${ids.step}%3acancel`],
  ];

  it('lets each team create, use, close and resolve its own runs and cancel its own operations; the other gets 404 on all of them, and nothing reaches the service', async () => {
    const a = await session(KEYS.teamA, 'team-a-agent');
    const b = await session(KEYS.teamB, 'team-b-agent');
    const arrived = service.requests.length;
    const refusals: Array<[string, string, number, unknown]> = [];
    for (const [intruder, owner] of [[KEYS.teamB, a], [KEYS.teamA, b]] as const) {
      for (const [method, path] of endpointsOf(owner)) {
        const res = await request(gw.url)[method === 'GET' ? 'get' : 'post'](path).set(as(intruder));
        refusals.push([method, path, res.status, res.body.error?.code]);
      }
    }
    expect(refusals).toEqual(refusals.map(([method, path]) => [method, path, 404, 'resource_not_found']));
    expect(service.requests.length).toBe(arrived);
    expect([service.runs.get(a.run)?.status, service.operations.get(a.step)?.status]).toEqual(['closed', 'succeeded']);
  });

  it('takes an encoded ":" as the service does: %3Aclose closes the caller\'s run, and never names another run than the one checked', async () => {
    const own = await createRun(KEYS.teamA, 'encoded-close');
    const res = await post(KEYS.teamA, `/v1/training/runs/${own}%3Aclose`);
    expect([res.status, res.body.status, service.last.url]).toEqual([200, 'closed', `/v1/training/runs/${own}%3Aclose`]);
    // `{run_id}` never holds a known verb: a GET of ".../r:close" is that custom method's path (405), not a run named "r:close".
    const arrived = service.requests.length;
    const wrongMethod = await get(KEYS.teamA, `/v1/training/runs/${own}%3Aclose`);
    expect([wrongMethod.status, wrongMethod.headers.allow]).toEqual([405, 'POST']);
    // "r:close:close" is the run "r:close" to the service: unknown to the gateway, so refused.
    const doubled = await post(KEYS.teamA, `/v1/training/runs/${own}:close%3Aclose`);
    expect([doubled.status, doubled.body.error.param]).toEqual([404, 'run_id']);
    expect(service.requests.length).toBe(arrived);
  });

  it('never hands out another team\'s run from resolve: the service\'s answer becomes the 404', async () => {
    const mine = await createRun(KEYS.teamA, 'shared-name');
    const taken = await post(KEYS.teamB, '/v1/training/runs', { name: 'shared-name' });
    expect(taken.status).toBe(409);
    const arrived = service.requests.length;
    const resolved = await post(KEYS.teamB, '/v1/training/runs:resolve', { name: 'shared-name' });
    // The lookup reached the service (a name is not an id the gateway knows), its answer did not reach team B.
    expect(service.requests.length).toBe(arrived + 1);
    expect([resolved.status, resolved.body]).toEqual([
      404,
      { error: { message: `No run "${mine}" was found for this team.`, type: 'not_found_error', param: 'run_id', code: 'resource_not_found' } },
    ]);
    expect(JSON.stringify(resolved.body)).not.toContain('Qwen');
    expect((await post(KEYS.teamA, '/v1/training/runs:resolve', { name: 'shared-name' })).body.run_id).toBe(mine);
    // A name nobody has is the service's own 404, passed through.
    expect((await post(KEYS.teamB, '/v1/training/runs:resolve', { name: 'nobody' })).body).toEqual({ detail: 'Run not found' });
  });

  it('never refuses a run polling under rpm: 300: 700 polls in one window (more than twice its rpm, as 600/min is) pass, and spend none of it', async () => {
    const run = await createRun(POLLER_KEY, 'poller');
    const step = await post(POLLER_KEY, `/v1/training/runs/${run}/optim_step`);
    expect(step.headers['x-ratelimit-remaining-requests']).toBe('298');
    // The client polls events and its operation in turn; 4 at a time to finish in seconds, not 70.
    const polls = Array.from({ length: 700 }, (_, i) => (i % 2 === 0 ? `/v1/training/runs/${run}/events?after=${i}` : `/v1/training/operations/${step.body.operation_id}`));
    const statuses = new Map<number, number>();
    for (let i = 0; i < polls.length; i += 4) {
      const answers = await Promise.all(polls.slice(i, i + 4).map((path) => get(POLLER_KEY, path)));
      for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect([...statuses]).toEqual([[200, 700]]);
    // The next limited request finds the window as the two limited ones left it (fixed 60 s window from the first).
    const checkpoints = await get(POLLER_KEY, `/v1/training/runs/${run}/checkpoints`);
    expect([checkpoints.status, checkpoints.headers['x-ratelimit-remaining-requests']]).toEqual([200, '297']);
    // Still a ledger row each.
    await gw.gateway.settled();
    const rows = await request(gw.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&team=team-p&limit=1000`).set(admin);
    const polled = (rows.body.data as Json[]).filter((row) => row.route === '/v1/training/runs/{run_id}/events' || row.route === '/v1/training/operations/{operation_id}');
    expect(polled.length).toBe(700);
  });

  it('writes ledger rows and metrics naming the command: the matched template with its literal segments and verbs', async () => {
    const ids = await session(KEYS.teamAProdOnly, 'ledger-names');
    await gw.gateway.settled();
    const rows = await request(gw.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&team=team-a&project=prod&limit=1000`).set(admin);
    const commands = new Set((rows.body.data as Json[]).map((row) => `${row.method} ${row.route} ${row.status}`));
    expect([...commands].sort()).toEqual(
      [
        'GET /v1/training/operations/{operation_id} 200',
        'GET /v1/training/operations/{operation_id}/result 200',
        'GET /v1/training/runs/{run_id} 200',
        'GET /v1/training/runs/{run_id}/checkpoints 200',
        'GET /v1/training/runs/{run_id}/events 200',
        'POST /v1/training/operations/{operation_id}:cancel 200',
        'POST /v1/training/runs 201',
        'POST /v1/training/runs 409',
        'POST /v1/training/runs/{run_id}/data 200',
        'POST /v1/training/runs/{run_id}/optim_step 202',
        'POST /v1/training/runs/{run_id}/save_state 202',
        'POST /v1/training/runs/{run_id}:close 200',
        'POST /v1/training/runs:resolve 200',
      ].sort(),
    );
    expect(ids.run).toMatch(/^run_/);
    expect(await metricValue(gw.url, 'tollgate_requests_total{route="/v1/training/runs/{run_id}:close",method="POST",upstream="service",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(await metricValue(gw.url, 'tollgate_requests_total{route="/v1/training/runs/{run_id}/optim_step",method="POST",upstream="service",status="202"}')).toBeGreaterThanOrEqual(1);
  });

  it('serves the reference openai client on the preset: its generic post creates a run and gets the 404 for another team\'s', async () => {
    const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const created = (await client(KEYS.teamA).post('/training/runs', { body: { name: 'openai-client-run' } })) as Json;
    expect(created).toMatchObject({ name: 'openai-client-run', status: 'active' });
    const foreign = await client(KEYS.teamB)
      .post(`/training/runs/${created.run_id as string}:close`, { body: {} })
      .then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.NotFoundError>);
    expect([foreign?.status, foreign?.code]).toEqual([404, 'resource_not_found']);
    expect(service.runs.get(created.run_id as string)?.status).toBe('active');
  });

  it('refuses a bad preset on reload with the key path in the file it came from, and keeps the running table', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'tollgate-preset-')), 'bad-preset.yaml');
    writeFileSync(bad, 'routes:\n  - { path: "/v1/training/runs/{run_id}:clo$e", methods: [POST], upstream: service, ownership: { checks: { param: run_id, kind: run } } }\n');
    writeFileSync(configPath, yaml(databasePath, service.url, inference.url, bad));
    const refused = await request(gw.url).post('/admin/config/reload').set(admin);
    expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_config']);
    expect(refused.body.error.message).toContain(`include ${bad}: routes[0].path: segment "{run_id}:clo$e": the verb "clo$e" must be a letter, then letters, digits or _`);
    expect((await get(KEYS.teamA, '/v1/training/capabilities')).status).toBe(200);
  });
});
