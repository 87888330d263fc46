import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyUpstreams, startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

describe('routing and proxying', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const auth = { authorization: bearer(KEYS.teamA) };

  it.each([
    ['GET', '/v1/preview/models/3f1c/checkpoints?after=ckpt_01&limit=2&order=asc'],
    ['DELETE', '/v1/preview/models/3f1c'],
    ['DELETE', '/v1/preview/models/3f1c/checkpoints'],
    ['GET', '/v1/preview/training-jobs/job-42'],
    ['GET', '/v1/preview/training-jobs/job-42/events?after=evt_1&limit=100'],
    ['GET', '/v1/health'],
    ['GET', '/v1/system-check'],
  ])('forwards %s %s to the training service with path and query unchanged', async (method, url) => {
    const before = stack.service.requests.length;
    const res = await request(stack.gw.url)[method.toLowerCase() as 'get' | 'delete'](url).set(auth);
    expect(res.status).toBe(200);
    expect(stack.service.requests.length).toBe(before + 1);
    expect(stack.service.last.method).toBe(method);
    expect(stack.service.last.url).toBe(url);
  });

  it('forwards GET /v1/models to the inference host and returns its body unchanged', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set(auth);
    expect(res.status).toBe(200);
    expect(res.text).toBe(
      '{"object":"list","data":[{"id":"OpenPipe/Qwen3-14B-Instruct","object":"model","created":0,"owned_by":"system","root":"OpenPipe/Qwen3-14B-Instruct"},{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":0,"owned_by":"system","root":"meta-llama/Llama-3.1-8B-Instruct"}]}',
    );
    expect(stack.inference.last.url).toBe('/v1/models');
  });

  it('streams preview POST bodies byte for byte', async () => {
    const body = `{"model_id":"m-1",  "trajectory_groups":[{"trajectories":[{"messages_and_choices":[],"reward":0.5}]}]}`;
    const res = await request(stack.gw.url).post('/v1/preview/training-jobs').set(auth).set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    expect(stack.service.last.body.toString()).toBe(body);
    expect(stack.service.last.url).toBe('/v1/preview/training-jobs');
  });

  it('keeps a trailing slash on the chat route', async () => {
    const res = await request(stack.gw.url)
      .post('/v1/chat/completions/')
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"model":"m","messages":[]}');
    expect(res.status).toBe(200);
    expect(stack.service.last.url).toBe('/v1/chat/completions/');
  });

  it('answers 404 with an OpenAI error body for an unknown path, without forwarding', async () => {
    const before = stack.service.requests.length + stack.inference.requests.length;
    const res = await request(stack.gw.url).get('/v1/fine_tuning/jobs').set(auth);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: 'No route for GET /v1/fine_tuning/jobs.', type: 'not_found_error', param: null, code: 'not_found' } });
    expect(stack.service.requests.length + stack.inference.requests.length).toBe(before);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 405 with Allow for a wrong method on a known path', async () => {
    const res = await request(stack.gw.url).put('/v1/preview/models/abc/checkpoints').set(auth);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, DELETE');
    expect(res.body.error.code).toBe('method_not_allowed');
    const chat = await request(stack.gw.url).get('/v1/chat/completions').set(auth);
    expect(chat.status).toBe(405);
    expect(chat.headers.allow).toBe('POST');
  });

  it.each([
    '/v1/preview/models/../../admin/usage',
    '/v1/preview/models/%2e%2e/checkpoints',
    '/v1/preview/models/.%2E/checkpoints',
    '/v1/preview/models/a%2Fb/checkpoints',
    '/v1/preview/models/a%5cb/checkpoints',
    '/v1/preview/training-jobs/./events',
  ])('rejects %s with 400 invalid_path and never forwards it', async (path) => {
    const before = stack.service.requests.length;
    const status = await rawGet(stack.gw.port, path, auth.authorization);
    expect(status.code).toBe(400);
    expect(JSON.parse(status.body)).toEqual({
      error: expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_path', param: null }),
    });
    expect(stack.service.requests.length).toBe(before);
  });

  it('generates an x-request-id, sends it upstream and returns it', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set(auth);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(stack.service.last.headers['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('tells the client what the gateway itself took before forwarding (x-tollgate-overhead-ms), only on forwarded requests', async () => {
    const forwarded = await request(stack.gw.url).get('/v1/health').set(auth);
    expect(forwarded.headers['x-tollgate-overhead-ms']).toMatch(/^\d+\.\d\d$/);
    expect(stack.service.last.headers['x-tollgate-overhead-ms']).toBeUndefined();
    const refused = await request(stack.gw.url).get('/v1/health').set('authorization', 'Bearer tg-not-a-key');
    expect(refused.status).toBe(401);
    expect(refused.headers['x-tollgate-overhead-ms']).toBeUndefined();
  });

  it('propagates the client x-request-id', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set(auth).set('x-request-id', 'req-abc-123');
    expect(res.headers['x-request-id']).toBe('req-abc-123');
    expect(stack.service.last.headers['x-request-id']).toBe('req-abc-123');
  });

  it('sets X-Forwarded-* and ignores the client-supplied ones when trustProxy is false', async () => {
    await request(stack.gw.url).get('/v1/health').set(auth).set('x-forwarded-for', '6.6.6.6');
    const headers = stack.service.last.headers;
    expect(headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-host']).toBe(`127.0.0.1:${stack.gw.port}`);
  });

  it('drops hop-by-hop headers and those named in Connection, keeps end-to-end ones', async () => {
    await request(stack.gw.url)
      .get('/v1/health')
      .set(auth)
      .set('connection', 'keep-alive, x-secret-hop')
      .set('x-secret-hop', '1')
      .set('te', 'trailers')
      .set('proxy-authorization', 'Basic Zm9vOmJhcg==')
      .set('x-custom', 'kept');
    const headers = stack.service.last.headers;
    expect(headers['x-secret-hop']).toBeUndefined();
    expect(headers.te).toBeUndefined();
    expect(headers['proxy-authorization']).toBeUndefined();
    expect(headers['x-custom']).toBe('kept');
    expect(headers.authorization).toBe(auth.authorization);
  });

  it('passes upstream errors through unchanged (503 from system-check)', async () => {
    const res = await request(stack.gw.url).get('/v1/system-check').set(auth).set('x-fixture-mode', 'system-down');
    expect(res.status).toBe(503);
    expect(res.body.gpu_queue).toEqual({ success: false, duration: 5.0, error: 'no GPU workers' });
  });

  it('passes upstream 404 bodies through unchanged', async () => {
    const res = await request(stack.gw.url).get('/v1/preview/training-jobs/missing').set(auth);
    expect(res.status).toBe(404);
    expect(res.text).toBe('{"detail":"Not Found"}');
  });

  it('pools keep-alive connections to the upstream', async () => {
    const before = stack.service.connections;
    for (let i = 0; i < 20; i++) {
      const res = await request(stack.gw.url).get('/v1/health').set(auth);
      expect(res.status).toBe(200);
    }
    expect(stack.service.connections - before).toBeLessThanOrEqual(1);
  });
});

describe('upstream authentication', () => {
  it('replaces the client Authorization with the configured bearer', async () => {
    const stack = await startStack({ upstreams: { service: { auth: { bearer: 'svc-secret-key' } } } });
    try {
      const res = await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.teamA));
      expect(res.status).toBe(200);
      expect(stack.service.last.headers.authorization).toBe('Bearer svc-secret-key');
      await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA));
      expect(stack.inference.last.headers.authorization).toBe(bearer(KEYS.teamA));
    } finally {
      await stack.close();
    }
  });
});

/** A GET with the path exactly as written (supertest/URL would normalise `..`). */
function rawGet(port: number, path: string, authorization: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: { authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('gateway-owned endpoints', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers /healthz and /readyz without a key', async () => {
    const health = await request(stack.gw.url).get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect(health.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const ready = await request(stack.gw.url).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', store: 'connected', database: 'connected', upstreams: readyUpstreams(stack.gw.config) });
  });

  it('turns /readyz 503 while draining', async () => {
    const other = await startStack();
    try {
      other.gw.gateway.startDraining();
      const ready = await request(other.gw.url).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'draining', store: 'connected', database: 'connected', upstreams: readyUpstreams(other.gw.config) });
    } finally {
      await other.close();
    }
  });

  it('asks a keep-alive client to close its connection on the operational endpoints once draining, not before', async () => {
    const other = await startStack();
    const agent = new Agent({ keepAlive: true });
    // A client that asks to keep its connection (supertest's does not), so `close` is the gateway's word.
    const headersOf = (path: string): Promise<IncomingHttpHeaders> =>
      new Promise((resolve, reject) => {
        httpRequest(`${other.gw.url}${path}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        })
          .on('error', reject)
          .end();
      });
    try {
      expect((await headersOf('/healthz')).connection).toBe('keep-alive');
      other.gw.gateway.startDraining();
      expect((await headersOf('/healthz')).connection).toBe('close');
      expect((await headersOf('/admin/usage')).connection).toBe('close');
    } finally {
      agent.destroy();
      await other.close();
    }
  });

  it.each(['/healthz', '/readyz', '/metrics', '/admin/usage'])('answers 405 with Allow: GET for POST %s', async (path) => {
    const res = await request(stack.gw.url).post(path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.body).toEqual({ error: { message: `POST is not allowed on ${path}; use GET.`, type: 'invalid_request_error', param: null, code: 'method_not_allowed' } });
  });

  it('serves the Prometheus exposition on /metrics', async () => {
    const res = await request(stack.gw.url).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE tollgate_requests_total counter');
  });
});

describe('metrics protected by a bearer token', () => {
  it('answers 401 without the token and 200 with it', async () => {
    const stack = await startStack({ metrics: { bearerToken: 'scrape-secret' } });
    try {
      expect((await request(stack.gw.url).get('/metrics')).status).toBe(401);
      expect((await request(stack.gw.url).get('/metrics').set('authorization', 'Bearer wrong')).status).toBe(401);
      expect((await request(stack.gw.url).get('/metrics').set('authorization', 'Bearer scrape-secret')).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
