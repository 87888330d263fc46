import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, startStack, testConfig } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { openHeldChat, postChunked } from '../../helpers/raw-http.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const auth = { authorization: bearer(KEYS.teamA) };
const chat = (stream = false) => JSON.stringify({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }], stream });

describe('upstream failures', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ upstreams: { service: { timeoutMs: 300 } } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers 502 upstream_unavailable when the upstream refuses connections', async () => {
    const deadPort = await freePort();
    const gw = await startGateway(testConfig({ service: `http://127.0.0.1:${deadPort}`, inference: `http://127.0.0.1:${deadPort}` }));
    try {
      const res = await request(gw.url).get('/v1/health').set(auth);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        error: { message: 'The service upstream refused the connection or could not be reached.', type: 'server_error', param: null, code: 'upstream_unavailable' },
      });
      expect(res.headers['x-request-id']).toBeDefined();
    } finally {
      await gw.close();
    }
  });

  it('answers 504 upstream_timeout when no response headers arrive within timeoutMs', async () => {
    const res = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').set('x-fixture-mode', 'hang').send(chat());
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      error: { message: 'The service upstream did not answer within 300 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
    });
  });

  it('answers 502 when the upstream resets the connection before answering', async () => {
    const res = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').set('x-fixture-mode', 'reset').send(chat());
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({ message: 'The service upstream closed the connection before answering.', type: 'server_error', param: null, code: 'upstream_unavailable' });
  });

  it('passes an upstream 500 through unchanged', async () => {
    const res = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').set('x-fixture-mode', 'error-500').send(chat());
    expect(res.status).toBe(500);
    expect(res.text).toBe('{"detail":"CUDA out of memory"}');
  });

  it('passes an inference-host 503 through unchanged', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set(auth).set('x-fixture-mode', 'overloaded');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: 'overloaded' } });
  });

  it('cuts the client connection when the upstream breaks off mid-stream', async () => {
    const outcome = await new Promise<{ status: number; error: string | null; body: string }>((resolve) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: stack.gw.port, path: '/v1/chat/completions', method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'x-fixture-mode': 'stream-break' } },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('error', (err) => resolve({ status: res.statusCode ?? 0, error: err.message, body }));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, error: null, body }));
        },
      );
      req.end(chat(true));
    });
    expect(outcome.status).toBe(200);
    expect(outcome.error).toBe('aborted');
    expect(outcome.body).not.toContain('[DONE]');
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    const { req, res, held } = await openHeldChat(stack.gw.port, auth, chat(true), stack.service);
    await once(res, 'data');
    const upstreamClosed = once(held.res, 'close');
    req.destroy();
    await upstreamClosed;
    expect(held.res.writableEnded).toBe(false);
  });
});

describe('body limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { bodyLimit: 1024, streamBodyLimit: 4096 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  const tooLarge = (limit: number) => ({
    error: { message: `The request body exceeds the limit of ${limit} bytes.`, type: 'invalid_request_error', param: null, code: 'request_too_large' },
  });

  it('answers 413 for a chat body over bodyLimit and forwards nothing', async () => {
    const before = stack.service.requests.length;
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
    const res = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').send(body);
    expect(res.status).toBe(413);
    expect(res.body).toEqual(tooLarge(1024));
    expect(stack.service.requests.length).toBe(before);
  });

  it('answers 413 for a declared preview body over streamBodyLimit before forwarding', async () => {
    const before = stack.service.requests.length;
    const res = await request(stack.gw.url).post('/v1/preview/models/m1/log').set(auth).set('content-type', 'application/json').send('x'.repeat(5000));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(tooLarge(4096));
    expect(stack.service.requests.length).toBe(before);
  });

  it('answers 413 when a chunked preview body grows past streamBodyLimit', async () => {
    const status = await postChunked(stack.gw.port, '/v1/preview/models/m1/log', { ...auth, 'content-type': 'application/json' }, ['x'.repeat(3000), 'x'.repeat(3000)]);
    expect(status).toBe(413);
  });

  it('closes the connection when it refuses an upload whose body is still arriving', async () => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/preview/models/m1/log',
      method: 'POST',
      headers: { authorization: 'Bearer tg-wrong-key', 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    req.write('{"split":"train","trajectory_groups":[');
    const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
    res.resume();
    expect(res.statusCode).toBe(401);
    expect(res.headers.connection).toBe('close');
    req.destroy();
  });

  it('streams a model creation like any preview upload while ownership is off: bodyLimit does not apply, streamBodyLimit does', async () => {
    const body = JSON.stringify({ entity: 'acme', project: 'p', name: 'big', base_model: 'b', config: { note: 'x'.repeat(2000) } });
    const res = await request(stack.gw.url).post('/v1/preview/models').set(auth).set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    expect(stack.service.last.body.toString()).toBe(body);
    const tooBig = await request(stack.gw.url).post('/v1/preview/models').set(auth).set('content-type', 'application/json').send('x'.repeat(5000));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual(tooLarge(4096));
  });

  it('streams a chunked preview body under the limit through intact', async () => {
    const parts = ['{"split":"train",', '"trajectory_groups":[]}'];
    const status = await postChunked(stack.gw.port, '/v1/preview/models/m1/log', { ...auth, 'content-type': 'application/json' }, parts);
    expect(status).toBe(200);
    expect(stack.service.last.body.toString()).toBe(parts.join(''));
  });
});
