import { once } from 'node:events';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { metricValue, startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

/** The database the gateways of one suite share: a fresh SQLite file or PostgreSQL database. */
export interface OwnershipStore {
  readonly name: string;
  /** `database` config for a gateway of this suite (the same store for every gateway started with it). */
  database(): Promise<Record<string, unknown>>;
  drop(): Promise<void>;
}

const admin = { authorization: bearer(KEYS.admin) };
const teamA = { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/rl' };
const teamB = { authorization: bearer(KEYS.teamB), 'openai-project': 'team-b/rl' };
const UPSTREAM_KEY = 'sk-shared-upstream-account';

/** A training-job body whose top-level model_id comes after `paddingBytes` of trajectory groups. */
export function jobBody(modelId: string, paddingBytes = 0, modelIdFirst = false): string {
  const trajectory = JSON.stringify({ trajectories: [{ messages_and_choices: [{ role: 'user', content: 'x'.repeat(1000) }], reward: 0.5 }] });
  const groups = paddingBytes === 0 ? '' : Array(Math.ceil(paddingBytes / trajectory.length)).fill(trajectory).join(',');
  return modelIdFirst ? `{"model_id":${JSON.stringify(modelId)},"trajectory_groups":[${groups}]}` : `{"trajectory_groups":[${groups}],"model_id":${JSON.stringify(modelId)}}`;
}

/** A job body of `paddingBytes` of trajectories between its first member, `model_id`, and `tail` (the rest of the object, `}` included). */
function jobBodyWithTail(modelId: string, paddingBytes: number, tail: string): Buffer {
  return Buffer.from(jobBody(modelId, paddingBytes, true).replace(/\}$/, tail));
}

/**
 * Until the request can take more, is answered, or closes. The waits that lose are taken off the
 * request (a 12 MB upload waits a couple of hundred times: left on, their listeners piled up).
 */
async function drainOrEnd(req: ClientRequest, answered: Promise<unknown>): Promise<void> {
  const lost = new AbortController();
  const drain = once(req, 'drain', { signal: lost.signal });
  const close = once(req, 'close', { signal: lost.signal });
  // Their rejection once taken off (an AbortError) is not an error; any other still fails the race.
  drain.catch(() => undefined);
  close.catch(() => undefined);
  try {
    await Promise.race([drain, answered, close]);
  } finally {
    lost.abort();
  }
}

/**
 * POSTs `body` as an upload: declared by Content-Length or chunked, written in 64 KiB slices as
 * the socket takes them. The gateway may answer (and close) before the last slice is written.
 */
async function postUpload(url: string, path: string, headers: Record<string, string>, body: Buffer, framing: 'length' | 'chunked'): Promise<{ status: number; body: unknown }> {
  const req = httpRequest(`${url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', ...(framing === 'length' ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' }) },
  });
  req.on('error', () => undefined);
  const answered = once(req, 'response') as Promise<[IncomingMessage]>;
  let gone = false;
  void answered.then(() => (gone = true));
  for (let at = 0; at < body.length && !gone && !req.destroyed; at += 64 * 1024) {
    if (!req.write(body.subarray(at, at + 64 * 1024))) await drainOrEnd(req, answered);
  }
  if (!gone) req.end();
  const [res] = await answered;
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) };
}

/**
 * SPEC 13 through the gateway, with every team sharing one upstream account (`auth: { bearer }`):
 * another team's models and jobs are refused on every route that names them, and never reach
 * the upstream; the owner gets through. Run once per durable store.
 */
export function describeOwnership(store: OwnershipStore): void {
  describe(`training resources belong to their team (${store.name})`, () => {
    let service: FakeUpstream;
    let inference: FakeUpstream;
    let gw: RunningGateway;
    let configFor: (overrides?: Record<string, unknown>) => Promise<ReturnType<typeof testConfig>>;
    let modelId = '';
    let jobId = '';
    /** `tollgate_ownership_denials_total` of one kind, as the gateway reports it now. */
    const denials = (kind: string): Promise<number> => metricValue(gw.url, `tollgate_ownership_denials_total{kind="${kind}"}`);

    beforeAll(async () => {
      [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
      // 30 s, not the suite's 2 s: the 12 MB bodies below pass the gateway's byte scanner, which under
      // mutation testing's instrumentation (npm run mutation) takes seconds; no test here waits on a timeout.
      configFor = async (overrides = {}) =>
        testConfig(
          { service: service.url, inference: inference.url },
          { upstreams: { service: { auth: { bearer: UPSTREAM_KEY }, timeoutMs: 30_000 } }, database: await store.database(), ...overrides },
        );
      gw = await startGateway(await configFor());
      const created = await request(gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'rl-agents', name: 'agent', base_model: 'OpenPipe/Qwen3-14B-Instruct' });
      expect(created.status).toBe(200);
      modelId = created.body.id as string;
      const job = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(jobBody(modelId));
      expect(job.status).toBe(200);
      jobId = job.body.id as string;
    });
    afterAll(async () => {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
      await store.drop();
    });

    const guarded = (): Array<[string, string, string]> => [
      ['DELETE', `/v1/preview/models/${modelId}/checkpoints`, 'model_id'],
      ['GET', `/v1/preview/models/${modelId}/checkpoints?limit=5`, 'model_id'],
      ['POST', `/v1/preview/models/${modelId}/log`, 'model_id'],
      ['GET', `/v1/preview/training-jobs/${jobId}`, 'training_job_id'],
      ['GET', `/v1/preview/training-jobs/${jobId}/events?after=evt_1`, 'training_job_id'],
      ['DELETE', `/v1/preview/models/${modelId}`, 'model_id'],
    ];
    const send = (method: string, path: string, headers: Record<string, string>) => {
      const call = request(gw.url)[method.toLowerCase() as 'get' | 'post' | 'delete'](path).set(headers);
      return method === 'GET' ? call : call.set('content-type', 'application/json').send(method === 'POST' ? '{"split":"train","trajectory_groups":[]}' : '{"steps":[10]}');
    };

    /** POSTs raw bytes as sent (supertest would serialize a Buffer as JSON). */
    const postBytes = async (path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: new Uint8Array(body) });
      return { status: res.status, body: await res.json() };
    };

    it('sends the shared upstream key, never the client\'s', () => {
      expect(service.last.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    });

    it('refuses another team on every route naming the model or job: 404 resource_not_found, nothing forwarded', async () => {
      for (const [method, path, param] of guarded()) {
        const before = service.started;
        const res = await send(method, path, teamB);
        expect([method, path, res.status]).toEqual([method, path, 404]);
        const kind = param === 'model_id' ? 'model' : 'training job';
        const id = param === 'model_id' ? modelId : jobId;
        expect(res.body).toEqual({ error: { message: `No ${kind} "${id}" was found for this team.`, type: 'not_found_error', param, code: 'resource_not_found' } });
        expect(service.started).toBe(before);
      }
    });

    it('answers another team exactly as it answers for a resource that does not exist', async () => {
      const foreign = await request(gw.url).get(`/v1/preview/training-jobs/${jobId}/events`).set(teamB);
      const missing = await request(gw.url).get('/v1/preview/training-jobs/job-that-never-was/events').set(teamB);
      expect(missing.status).toBe(foreign.status);
      expect(JSON.stringify(missing.body).replace('job-that-never-was', jobId)).toBe(JSON.stringify(foreign.body));
    });

    it('lets the owning team through on every route', async () => {
      for (const [method, path] of guarded().slice(0, 5)) {
        const res = await send(method, path, teamA);
        expect([method, path, res.status]).toEqual([method, path, 200]);
      }
    });

    it('refuses a chat with another team\'s wandb-artifact model (404 model_not_found), not the owner\'s or other models', async () => {
      const chat = (headers: Record<string, string>, model: string) =>
        request(gw.url).post('/v1/chat/completions').set(headers).set('content-type', 'application/json').send({ model, messages: [{ role: 'user', content: 'hi' }] });
      const model = 'wandb-artifact:///acme/rl-agents/agent:step40';
      const deniedBefore = await denials('model');
      const refused = await chat(teamB, model);
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({
        error: { message: `The model "${model}" does not exist or you do not have access to it.`, type: 'not_found_error', param: 'model', code: 'model_not_found' },
      });
      expect((await chat(teamA, model)).status).toBe(200);
      expect((await chat(teamB, 'OpenPipe/Qwen3-14B-Instruct')).status).toBe(200);
      expect((await chat(teamB, 'wandb-artifact:///acme/rl-agents/other-agent')).status).toBe(200);
      // The one refusal is counted as a model denial; the chats let through are not.
      expect(await denials('model')).toBe(deniedBefore + 1);
    });

    it('refuses a job on another team\'s model before a byte is forwarded, also with model_id after 5 MB of trajectories', async () => {
      for (const body of [jobBody(modelId), jobBody(modelId, 5 * 1024 ** 2)]) {
        const before = service.started;
        const res = await request(gw.url).post('/v1/preview/sft-training-jobs').set(teamB).set('content-type', 'application/json').send(body);
        expect(res.status).toBe(404);
        expect(res.body.error).toEqual({ message: `No model "${modelId}" was found for this team.`, type: 'not_found_error', param: 'model_id', code: 'resource_not_found' });
        expect(service.started).toBe(before);
      }
      const owner = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(jobBody(modelId, 5 * 1024 ** 2));
      expect(owner.status).toBe(200);
      expect(service.last.bodyLength).toBe(Buffer.byteLength(jobBody(modelId, 5 * 1024 ** 2)));
    });

    it.each([
      ['no model_id at all', '{"trajectory_groups":[]}', 'The body has no top-level "model_id".'],
      ['a model_id only nested', '{"trajectory_groups":[{"model_id":"x"}]}', 'The body has no top-level "model_id".'],
      ['a body that is not JSON', 'model_id=x', 'The body must be a JSON object with a top-level "model_id".'],
      ['an empty body', '', 'The body has no top-level "model_id".'],
    ])('answers 400 invalid_request (param model_id) for a job with %s; nothing forwarded', async (_what, body, message) => {
      const before = service.started;
      const res = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param: 'model_id', code: 'invalid_request' } });
      expect(service.started).toBe(before);
    });

    it('never lets a second top-level model_id through (the upstream would take the last)', async () => {
      const body = `{"model_id":${JSON.stringify(modelId)},"trajectory_groups":[],"model_id":"someone-elses"}`;
      const res = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('The body has more than one top-level "model_id".');
      expect(service.requests.some((r) => r.body.toString().includes('someone-elses'))).toBe(false);
    });

    it.each([['/v1/preview/training-jobs'], ['/v1/preview/sft-training-jobs']])(
      'refuses a job whose second model_id follows a NaN (Python reads NaN and takes the last model_id): 400 on %s, nothing forwarded',
      async (path) => {
        const before = service.started;
        const body = `{"model_id":${JSON.stringify(modelId)},"x":NaN,"model_id":"someone-elses"}`;
        const res = await request(gw.url).post(path).set(teamA).set('content-type', 'application/json').send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: { message: 'The body has more than one top-level "model_id".', type: 'invalid_request_error', param: 'model_id', code: 'invalid_request' } });
        expect(service.started).toBe(before);
      },
    );

    it.each([
      ['a UTF-8 byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"model_id":"x"}`)]), 'The body must be UTF-8 JSON without a byte order mark.'],
      ['UTF-16', Buffer.from('{"model_id":"x"}', 'utf16le'), 'The body must be UTF-8 JSON without a byte order mark.'],
      ['an escaped second model_id', Buffer.from('{"model_id":"x","model\\u005fid":"y"}'), 'The body has more than one top-level "model_id".'],
      ['text after the object', Buffer.from('{"model_id":"x"} {"model_id":"y"}'), 'The body must be a JSON object with a top-level "model_id".'],
      ['no model_id within server.bodyLimit', Buffer.from(jobBody('x', 11 * 1024 ** 2)), 'The body has no top-level "model_id" within its first 10485760 bytes (server.bodyLimit).'],
    ])('refuses a job body with %s (400 invalid_request, param model_id), nothing forwarded', async (_what, body, message) => {
      const before = service.started;
      const res = await postBytes('/v1/preview/training-jobs', teamA, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param: 'model_id', code: 'invalid_request' } });
      expect(service.started).toBe(before);
    });

    it.each([['length' as const], ['chunked' as const]])(
      'streams a job body larger than server.bodyLimit (12 MB, model_id first, %s) to the upstream whole: 200, its id recorded',
      async (framing) => {
        const body = jobBodyWithTail(modelId, 12 * 1024 ** 2, '}');
        const res = await postUpload(gw.url, '/v1/preview/training-jobs', teamA, body, framing);
        expect(res.status).toBe(200);
        expect(service.last.bodyLength).toBe(body.length);
        expect(service.last.body.equals(body.subarray(0, service.last.body.length))).toBe(true);
        const id = (res.body as { id: string }).id;
        expect((await request(gw.url).get(`/v1/preview/training-jobs/${id}`).set(teamB)).status).toBe(404);
        expect((await request(gw.url).get(`/v1/preview/training-jobs/${id}`).set(teamA)).status).toBe(200);
      },
      60_000,
    );

    it.each([
      ['a second top-level model_id 5 MB after the first', 5, ',"model_id":"someone-elses"}', 'The body has more than one top-level "model_id".', 'length'],
      ['a second top-level model_id 12 MB after the first (past server.bodyLimit)', 12, ',"model_id":"someone-elses"}', 'The body has more than one top-level "model_id".', 'length'],
      ['a second top-level model_id 12 MB after the first, chunked', 12, ',"model_id":"someone-elses"}', 'The body has more than one top-level "model_id".', 'chunked'],
      ['NaN after model_id and a duplicate 12 MB later', 12, ',"x":NaN,"model\\u005fid":"someone-elses"}', 'The body has more than one top-level "model_id".', 'length'],
      ['text after the object, 12 MB later', 12, '} {"model_id":"someone-elses"}', 'The body must be a JSON object with a top-level "model_id".', 'chunked'],
      ['a body that breaks off its object 12 MB later', 12, '', 'The body must be a JSON object with a top-level "model_id".', 'length'],
    ] as const)('never lets a job body with %s reach the upstream whole: 400 invalid_request (param model_id)', async (_what, mb, tail, message, framing) => {
      const before = service.requests.length;
      const body = jobBodyWithTail(modelId, mb * 1024 ** 2, tail);
      const res = await postUpload(gw.url, '/v1/preview/training-jobs', teamA, body, framing);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param: 'model_id', code: 'invalid_request' } });
      // The upstream records a request once its body has ended: this one's never did.
      expect(service.requests.length).toBe(before);
    }, 60_000);

    it.each([
      ['a UTF-8 byte order mark', (json: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), 'The body must be UTF-8 JSON without a byte order mark.', null],
      ['UTF-16', (json: string) => Buffer.from(json, 'utf16le'), 'The body must be UTF-8 JSON without a byte order mark.', null],
      ['UTF-32', (json: string) => Buffer.from([...Buffer.from(json)].flatMap((b) => [b, 0, 0, 0])), 'The body must be UTF-8 JSON without a byte order mark.', null],
      ['a second name (Python takes the last)', (json: string) => Buffer.from(json.replace('"name":"agent"', '"name":"mine","name":"agent"')), 'The body has more than one top-level "name".', 'name'],
      ['an escaped second entity', (json: string) => Buffer.from(json.replace('}', ',"entit\\u0079":"acme"}')), 'The body has more than one top-level "entity".', 'entity'],
      ['text after the object', (json: string) => Buffer.from(`${json}x`), 'The body must be one JSON object.', null],
      ['a name that is not a string', (json: string) => Buffer.from(json.replace('"name":"agent"', '"name":["agent"]')), 'The body\'s top-level "name" must be a string.', 'name'],
    ])('refuses a model creation with %s (400 invalid_request), so no name escapes the check; nothing forwarded', async (_what, encode, message, param) => {
      const before = service.started;
      const json = JSON.stringify({ entity: 'acme', project: 'rl-agents', name: 'agent', base_model: 'b', return_existing: true });
      const res = await postBytes('/v1/preview/models', teamB, encode(json));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });
      expect(service.started).toBe(before);
    });

    it('reads a model creation with NaN as Python does, so another team\'s name is still 409 name_in_use; nothing forwarded', async () => {
      const before = service.started;
      const body = '{"entity":"acme","project":"rl-agents","x":NaN,"name":"agent","base_model":"b","return_existing":true}';
      const res = await request(gw.url).post('/v1/preview/models').set(teamB).set('content-type', 'application/json').send(body);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('name_in_use');
      expect(service.started).toBe(before);
    });

    it('refuses a compressed guarded body (the gateway reads the bytes as sent): 400 invalid_request, nothing forwarded', async () => {
      const before = service.started;
      const res = await request(gw.url).post('/v1/preview/models').set(teamB).set('content-type', 'application/json').set('content-encoding', 'gzip').send('{"project":"p","name":"n"}');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message: 'A guarded body must be sent uncompressed (Content-Encoding: gzip).', type: 'invalid_request_error', param: null, code: 'invalid_request' } });
      expect(service.started).toBe(before);
    });

    it('never lets a second top-level model_id megabytes after the first reach the upstream whole', async () => {
      // model_id first, so the upload is already streaming when the second one arrives: the
      // upstream may see its start (today it does), never its end — it cannot act on a cut body.
      const body = `${jobBody(modelId, 5 * 1024 ** 2, true).slice(0, -1)},"model_id":"someone-elses"}`;
      const completed = service.requests.length;
      const res = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(body);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.error.code).toBe('invalid_request');
      // A later request completes after anything the cut one could still have delivered.
      const next = await request(gw.url).post('/v1/preview/training-jobs').set(teamA).set('content-type', 'application/json').send(jobBody(modelId));
      expect(next.status).toBe(200);
      expect(service.requests.slice(completed).map((r) => r.bodyLength)).toEqual([Buffer.byteLength(jobBody(modelId))]);
    });

    it('refuses a model name another team holds (409 name_in_use) before forwarding; return_existing never hands out its id', async () => {
      const before = service.started;
      const deniedBefore = await denials('model');
      const res = await request(gw.url)
        .post('/v1/preview/models')
        .set(teamB)
        .send({ entity: 'acme', project: 'rl-agents', name: 'agent', base_model: 'OpenPipe/Qwen3-14B-Instruct', return_existing: true });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: { message: 'The model name "acme/rl-agents/agent" belongs to another team; choose another name.', type: 'invalid_request_error', param: 'name', code: 'name_in_use' },
      });
      expect(JSON.stringify(res.body)).not.toContain(modelId);
      expect(service.started).toBe(before);
      expect(await denials('model')).toBe(deniedBefore + 1);
    });

    it('keeps the records across a restart, and replaces an upstream answer naming another team\'s model with 409', async () => {
      // A model created without an entity: the upstream fills in the account's own.
      const unnamed = await request(gw.url).post('/v1/preview/models').set(teamA).send({ project: 'rl-agents', name: 'quiet', base_model: 'Qwen/Qwen3-8B' });
      expect(unnamed.status).toBe(200);
      await gw.close();
      gw = await startGateway(await configFor());
      // Restarted, the gateway cannot tell the name is taken before asking (it has not learned the
      // account's entity); the upstream answers with team A's id, which is never handed out.
      const res = await request(gw.url).post('/v1/preview/models').set(teamB).send({ project: 'rl-agents', name: 'quiet', base_model: 'Qwen/Qwen3-8B', return_existing: true });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('name_in_use');
      expect(res.text).not.toContain(unnamed.body.id as string);
      expect((await request(gw.url).get(`/v1/preview/models/${modelId}/checkpoints`).set(teamA)).status).toBe(200);
      expect((await request(gw.url).get(`/v1/preview/models/${modelId}/checkpoints`).set(teamB)).status).toBe(404);
    });

    it('releases a model its owner deletes: afterwards it is unknown, so refused (unknown: deny)', async () => {
      const created = await request(gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'rl-agents', name: 'short-lived', base_model: 'b' });
      const id = created.body.id as string;
      expect((await request(gw.url).delete(`/v1/preview/models/${id}`).set(teamA)).status).toBe(200);
      expect((await request(gw.url).get(`/v1/preview/models/${id}/checkpoints`).set(teamA)).status).toBe(404);
    });

    it('lists, assigns (adopts) and releases records through the admin API, audited', async () => {
      const legacy = 'job-made-before-ownership';
      expect((await request(gw.url).get(`/v1/preview/training-jobs/${legacy}`).set(teamA)).status).toBe(404);
      const assigned = await request(gw.url).put(`/admin/resources/training_job/${legacy}`).set(admin).send({ team: 'team-a', project: 'rl' });
      expect(assigned.status).toBe(200);
      expect(assigned.body).toEqual({ kind: 'training_job', id: legacy, team: 'team-a', project: 'rl', createdAt: expect.any(String) });
      expect((await request(gw.url).get(`/v1/preview/training-jobs/${legacy}`).set(teamA)).status).toBe(200);
      const listed = await request(gw.url).get('/admin/resources?team=team-a&kind=model').set(admin);
      expect(listed.body.data).toContainEqual({ kind: 'model', id: modelId, team: 'team-a', project: 'rl', artifact: 'acme/rl-agents/agent', createdAt: expect.any(String) });
      expect((await request(gw.url).delete(`/admin/resources/training_job/${legacy}`).set(admin)).status).toBe(204);
      expect((await request(gw.url).get(`/v1/preview/training-jobs/${legacy}`).set(teamA)).status).toBe(404);
      expect((await request(gw.url).delete(`/admin/resources/training_job/${legacy}`).set(admin)).status).toBe(404);
      await gw.gateway.settled();
      const today = utcDay();
      const audit = await request(gw.url).get(`/admin/audit?from=${today}&to=${today}`).set(admin);
      const resourceEntries = (audit.body.data as Array<{ action: string; target: string; result: string }>).filter((e) => e.action.startsWith('resource.'));
      expect(resourceEntries.map((e) => [e.action, e.target, e.result])).toEqual([
        ['resource.assign', `training_job/${legacy}`, 'ok'],
        ['resource.release', `training_job/${legacy}`, 'ok'],
        ['resource.release', `training_job/${legacy}`, 'resource_not_found'],
      ]);
    });

    it('adopts a model made before ownership was on with its artifact name, so chats naming it are guarded too', async () => {
      const legacy = 'model-made-before-ownership';
      const chat = (headers: Record<string, string>) =>
        request(gw.url)
          .post('/v1/chat/completions')
          .set(headers)
          .set('content-type', 'application/json')
          .send({ model: 'wandb-artifact:///acme/legacy/old-agent:v3', messages: [{ role: 'user', content: 'hi' }] });
      expect((await chat(teamB)).status).toBe(200);
      const wrong = await request(gw.url).put(`/admin/resources/training_job/job-x`).set(admin).send({ team: 'team-a', project: 'rl', artifact: 'acme/legacy/old-agent' });
      expect([wrong.status, wrong.body.error.param]).toEqual([400, 'artifact']);
      const malformed = await request(gw.url).put(`/admin/resources/model/${legacy}`).set(admin).send({ team: 'team-a', project: 'rl', artifact: 'wandb-artifact:///acme/legacy/old-agent' });
      expect([malformed.status, malformed.body.error.param]).toEqual([400, 'artifact']);
      const assigned = await request(gw.url).put(`/admin/resources/model/${legacy}`).set(admin).send({ team: 'team-a', project: 'rl', artifact: 'acme/legacy/old-agent' });
      expect(assigned.body).toEqual({ kind: 'model', id: legacy, team: 'team-a', project: 'rl', artifact: 'acme/legacy/old-agent', createdAt: expect.any(String) });
      expect((await chat(teamB)).status).toBe(404);
      expect((await chat(teamA)).status).toBe(200);
      // Assigned again without an artifact (to another project): it keeps its name.
      const moved = await request(gw.url).put(`/admin/resources/model/${legacy}`).set(admin).send({ team: 'team-a', project: 'prod' });
      expect(moved.body.artifact).toBe('acme/legacy/old-agent');
      expect((await chat(teamB)).status).toBe(404);
    });

    it('counts denials by kind', async () => {
      expect(await denials('model')).toBeGreaterThan(0);
      expect(await denials('training_job')).toBeGreaterThan(0);
    });
  });
}

/**
 * `scope: project` separates two projects of one team, and never joins two teams' projects
 * that share a name: the project name alone says nothing about its team.
 */
export function describeProjectScope(store: OwnershipStore): void {
  describe(`ownership by project (${store.name})`, () => {
    let service: FakeUpstream;
    let inference: FakeUpstream;
    let gw: RunningGateway;

    beforeAll(async () => {
      [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
      gw = await startGateway(
        testConfig(
          { service: service.url, inference: inference.url },
          { upstreams: { service: { auth: { bearer: UPSTREAM_KEY } } }, ownership: { scope: 'project' }, database: await store.database() },
        ),
      );
    });
    afterAll(async () => {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
      await store.drop();
    });

    it('refuses another project of the same team', async () => {
      const prod = { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/prod' };
      const research = { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/research' };
      const created = await request(gw.url).post('/v1/preview/models').set(prod).send({ entity: 'acme', project: 'p', name: 'n', base_model: 'b' });
      const path = `/v1/preview/models/${created.body.id as string}/checkpoints`;
      expect((await request(gw.url).get(path).set(prod)).status).toBe(200);
      expect((await request(gw.url).get(path).set(research)).status).toBe(404);
    });

    it('refuses team-b/rl a model team-a/rl created: same project name, another team; nothing forwarded', async () => {
      const created = await request(gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'same-name', base_model: 'b' });
      expect(created.status).toBe(200);
      const id = created.body.id as string;
      const path = `/v1/preview/models/${id}/checkpoints`;
      const before = service.started;
      const res = await request(gw.url).get(path).set(teamB);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { message: `No model "${id}" was found for this team.`, type: 'not_found_error', param: 'model_id', code: 'resource_not_found' } });
      expect(service.started).toBe(before);
      const job = await request(gw.url).post('/v1/preview/training-jobs').set(teamB).set('content-type', 'application/json').send(jobBody(id));
      expect(job.status).toBe(404);
      expect(service.started).toBe(before);
      expect((await request(gw.url).get(path).set(teamA)).status).toBe(200);
    });
  });
}
