import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, startStack, testConfig } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService } from '../../fixtures/training-service.js';

const auth = { authorization: bearer(KEYS.teamA) };
const MODEL = 'wandb-artifact:///acme/rl-agents/qwen-grpo:step40';

describe('what the gateway sends upstream', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('re-sends a chunked chat body as its exact bytes with a Content-Length, dropping hop-by-hop and spoofed headers', async () => {
    const body = `{"model":"${MODEL}","messages":[{"role":"user","content":"héllo"}]}`;
    const req = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'x-forwarded-for': '6.6.6.6',
        'x-custom': 'kept',
      },
    });
    req.write(body.slice(0, 20));
    req.end(body.slice(20));
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    await once(res, 'end');

    expect(res.statusCode).toBe(200);
    const sent = stack.service.last;
    expect(sent.body.toString('utf8')).toBe(body);
    expect(sent.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(sent.headers['transfer-encoding']).toBeUndefined();
    expect(sent.headers['keep-alive']).toBeUndefined();
    expect(sent.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(sent.headers['x-custom']).toBe('kept');
    expect(sent.headers['accept-encoding']).toBe('identity');
    expect(sent.headers['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('returns the x-request-id on a 401 the gateway answers itself', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', 'Bearer tg-unknown').set('x-request-id', 'req-401');
    expect(res.status).toBe(401);
    expect(res.headers['x-request-id']).toBe('req-401');
  });

  it('returns the x-request-id on a 422 for an invalid chat body', async () => {
    const res = await request(stack.gw.url)
      .post('/v1/chat/completions')
      .set(auth)
      .set('x-request-id', 'req-422')
      .set('content-type', 'application/json')
      .send('{"messages":[]}');
    expect(res.status).toBe(422);
    expect(res.headers['x-request-id']).toBe('req-422');
  });
});

describe('an upstream URL with a path', () => {
  it('forwards requests under that path, query unchanged', async () => {
    const service = await startTrainingService();
    const inference = await startInferenceHost();
    const gw = await startGateway(testConfig({ service: `${service.url}/base`, inference: inference.url }));
    try {
      await request(gw.url).get('/v1/preview/training-jobs/job-42/events?after=evt_1&limit=100').set(auth);
      expect(service.last.url).toBe('/base/v1/preview/training-jobs/job-42/events?after=evt_1&limit=100');
    } finally {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
    }
  });
});

describe('a chat request the upstream refuses', () => {
  it('answers 502 upstream_unavailable with its x-request-id', async () => {
    const deadPort = await freePort();
    const gw = await startGateway(testConfig({ service: `http://127.0.0.1:${deadPort}`, inference: `http://127.0.0.1:${deadPort}` }));
    try {
      const res = await request(gw.url)
        .post('/v1/chat/completions')
        .set(auth)
        .set('x-request-id', 'req-502')
        .set('content-type', 'application/json')
        .send(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_unavailable');
      expect(res.headers['x-request-id']).toBe('req-502');
    } finally {
      await gw.close();
    }
  });
});
