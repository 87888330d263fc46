import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../../src/app.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { testConfig } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { jsonLineSink } from '../../helpers/log-lines.js';

/** One JSON log line per request, with what an operator needs and never a credential. */
describe('request log', () => {
  const lines: Array<Record<string, unknown>> = [];
  let raw = '';
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateway: Gateway;
  let url: string;
  let server: ReturnType<typeof createServer>;

  beforeAll(async () => {
    service = await startTrainingService();
    inference = await startInferenceHost();
    const sink = jsonLineSink(lines, (text) => (raw += text));
    gateway = await createGateway(testConfig({ service: service.url, inference: inference.url }), { logger: pino({ level: 'info' }, sink) });
    server = createServer(gateway.handleRequest).listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await gateway.close();
    await Promise.all([service.close(), inference.close()]);
  });

  const nextLine = async (requestId: string): Promise<Record<string, unknown>> => {
    // The line is written when the response closes, which can trail the client's read by a tick.
    for (let i = 0; i < 100 && !lines.some((l) => l.requestId === requestId); i++) await new Promise((r) => setImmediate(r));
    return lines.find((l) => l.requestId === requestId)!;
  };

  it('logs one line for a chat completion with team, project, key id, model and tokens', async () => {
    const res = await request(url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(KEYS.teamA))
      .set('OpenAI-Project', 'team-a/prod')
      .set('x-request-id', 'log-test-1')
      .set('content-type', 'application/json')
      .send('{"model":"OpenPipe/Qwen3-14B-Instruct","messages":[{"role":"user","content":"hi"}]}');
    expect(res.status).toBe(200);
    const line = await nextLine('log-test-1');
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      requestId: 'log-test-1',
      route: '/v1/chat/completions',
      method: 'POST',
      status: 200,
      team: 'team-a',
      project: 'prod',
      keyId: 'team-a-bot',
      model: 'OpenPipe/Qwen3-14B-Instruct',
      promptTokens: 12,
      completionTokens: 5,
      totalTokens: 17,
    });
    expect(typeof line.durationMs).toBe('number');
    expect(typeof line.overheadMs).toBe('number');
    expect(typeof line.ttfbMs).toBe('number');
    expect(lines.filter((l) => l.requestId === 'log-test-1')).toHaveLength(1);
  });

  it('logs rejected requests with the error code and never the key', async () => {
    await request(url).get('/v1/models').set('authorization', 'Bearer tg-leaked-secret-value').set('x-request-id', 'log-test-2');
    const line = await nextLine('log-test-2');
    expect(line).toMatchObject({ status: 401, error: 'invalid_api_key', route: '/v1/models' });
    expect(raw).not.toContain('tg-leaked-secret-value');
    expect(raw).not.toContain(KEYS.teamA);
  });

  it('logs a 422 with its error code, like every other refusal', async () => {
    const res = await request(url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(KEYS.teamA))
      .set('x-request-id', 'log-test-3')
      .set('content-type', 'application/json')
      .send('{"messages":[]}');
    expect(res.status).toBe(422);
    const line = await nextLine('log-test-3');
    expect(line).toMatchObject({ status: 422, error: 'validation_failed', route: '/v1/chat/completions', team: 'team-a', keyId: 'team-a-bot' });
  });
});
