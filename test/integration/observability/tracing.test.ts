import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../../src/app.js';
import { utcDay } from '../../../src/calendar.js';
import { createGatewayServer } from '../../../src/server.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from '../../fixtures/otlp-receiver.js';
import { metricValue, startStack, testConfig } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { jsonLineSink } from '../../helpers/log-lines.js';

/** SPEC 18: spans the gateway sends to an OTLP/HTTP collector (the SDK's encoding and transport), as the collector decodes them. */

const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const admin = { authorization: bearer(KEYS.admin) };

type Stack = Awaited<ReturnType<typeof startStack>>;

const tracingConfig = (receiver: OtlpReceiver, extra: Record<string, unknown> = {}) => ({
  tracing: { enabled: true, endpoint: receiver.url, scheduledDelayMs: 20, providerNames: { service: 'openpipe' }, ...extra },
  metering: { prices: { models: { [MODEL]: { prompt: 1, completion: 2 } } } },
});

const chat = (stack: Stack, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  request(stack.gw.url)
    .post('/v1/chat/completions')
    .set('authorization', bearer(KEYS.teamA))
    .set('OpenAI-Project', 'team-a/prod')
    .set('content-type', 'application/json')
    .set(headers)
    .send(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'how is the loss?' }], ...body }));

const byName = (spans: readonly ReceivedSpan[], name: string): ReceivedSpan => {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span "${name}" among ${spans.map((s) => s.name).join(', ')}`);
  return span;
};

/** The spans of one trace, once its SERVER span (ended last) has arrived. */
async function traceOf(receiver: OtlpReceiver, traceId: string): Promise<ReceivedSpan[]> {
  await receiver.spansWhere((s) => s.traceId === traceId && s.kind === SPAN_KIND.server);
  return receiver.spans.filter((s) => s.traceId === traceId);
}

/** The trace id the upstream was sent, from the last request it got. */
function upstreamTraceparent(stack: Stack): string[] {
  const header = stack.service.requests.at(-1)!.headers.traceparent;
  return typeof header === 'string' ? header.split('-') : [];
}

describe('tracing to an OTLP/HTTP collector', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack({ ...tracingConfig(receiver), rateLimits: { projects: { 'team-b/*': { rpm: 1 } } } });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it('continues the client trace: a SERVER span, the steps under it, the GenAI CLIENT span, the same trace upstream and in the ledger', async () => {
    // 100 ms either side: the gateway's performance clock and Date.now() agree far closer than that in one process.
    const sentAt = BigInt(Date.now() - 100) * 1_000_000n;
    const res = await chat(stack, { max_tokens: 50, temperature: 0.2 }, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    const spans = await traceOf(receiver, CLIENT_TRACE);
    const server = byName(spans, 'POST /v1/chat/completions');
    expect(server.kind).toBe(SPAN_KIND.server);
    expect(server.parentSpanId).toBe(CLIENT_SPAN);
    expect(server.resource['service.name']).toBe('tollgate');
    // The client's tracestate is kept.
    expect(server.traceState).toBe('vendor=abc');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.team': 'team-a',
      'tollgate.project': 'prod',
      'tollgate.key_id': 'team-a-bot',
    });
    const steps = spans.filter((s) => s.kind === SPAN_KIND.internal);
    expect(steps.map((s) => s.name).sort()).toEqual(['auth', 'limits', 'validate']);
    for (const step of steps) expect(step.parentSpanId).toBe(server.spanId);
    expect(byName(steps, 'limits').attributes).toMatchObject({ 'tollgate.limits.decision': 'admitted' });

    const client = byName(spans, `chat ${MODEL}`);
    expect(client.kind).toBe(SPAN_KIND.client);
    expect(client.parentSpanId).toBe(server.spanId);
    // Every span its own valid id (16 hex digits, not all zero).
    const ids = spans.map((s) => s.spanId);
    for (const id of ids) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(client.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openpipe',
      'gen_ai.request.model': MODEL,
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.response.model': MODEL,
      'gen_ai.response.id': 'chatcmpl-7f3a',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'http.response.status_code': 200,
      'tollgate.team': 'team-a',
      'tollgate.cost': 0.000022,
    });
    expect(client.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(client.attributes['gen_ai.output.messages']).toBeUndefined();

    // The spans' times are the request's, on the wall clock: each child inside the SERVER span
    // (every span's times from one clock), which starts after the request was sent.
    expect(server.startTime).toBeGreaterThanOrEqual(sentAt);
    expect(server.endTime).toBeLessThanOrEqual(BigInt(Date.now() + 100) * 1_000_000n);
    for (const child of [...steps, client]) {
      expect(child.startTime).toBeGreaterThanOrEqual(server.startTime);
      expect(child.endTime).toBeGreaterThanOrEqual(child.startTime);
      expect(child.endTime).toBeLessThanOrEqual(server.endTime);
    }

    // The upstream continues the trace under the CLIENT span; the client's tracestate goes with it.
    expect(upstreamTraceparent(stack)).toEqual(['00', CLIENT_TRACE, client.spanId, '01']);
    expect(stack.service.requests.at(-1)!.headers.tracestate).toBe('vendor=abc');

    await stack.gw.gateway.settled();
    const day = utcDay();
    const rows = await request(stack.gw.url).get(`/admin/usage/requests?from=${day}&to=${day}`).set(admin);
    expect(rows.status).toBe(200);
    const row = (rows.body.data as Array<{ request_id: string; trace_id: string | null }>).find((r) => r.request_id === res.headers['x-request-id']);
    expect(row?.trace_id).toBe(CLIENT_TRACE);
    const ndjson = await request(stack.gw.url).get(`/admin/usage/requests?from=${day}&to=${day}`).set(admin).set('accept', 'application/x-ndjson');
    expect(ndjson.text).toContain(`"trace_id":"${CLIENT_TRACE}"`);
  });

  it('times the first chunk of a stream and reads its finish reasons', async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const res = await chat(stack, { stream: true }, { traceparent: `00-${traceId}-${CLIENT_SPAN}-01` });
    expect(res.status).toBe(200);
    const client = byName(await traceOf(receiver, traceId), `chat ${MODEL}`);
    expect(client.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'gen_ai.response.id': 'chatcmpl-7f3b', 'gen_ai.response.finish_reasons': ['stop'] });
    expect(client.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
  });

  it('starts a trace of its own for a malformed traceparent, and sends that one upstream (without the tracestate that came with it)', async () => {
    const res = await chat(stack, {}, { traceparent: '00-not-a-trace-01', tracestate: 'vendor=orphan', 'x-request-id': 'malformed-tp' });
    expect(res.status).toBe(200);
    const [server] = await receiver.spansWhere((s) => s.kind === SPAN_KIND.server && s.parentSpanId === '' && s.attributes['http.route'] === '/v1/chat/completions');
    const [version, traceId, , flags] = upstreamTraceparent(stack);
    expect(version).toBe('00');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(flags).toBe('01');
    expect(server!.traceId).toBe(traceId);
    expect(stack.service.requests.at(-1)!.headers.tracestate).toBeUndefined();
  });

  it('shows a refusal as a span with its reason: 401 on the auth step, the SERVER span not an error', async () => {
    const traceId = '11112222333344445555666677778888';
    const res = await request(stack.gw.url)
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer tg-not-a-key')
      .set('traceparent', `00-${traceId}-${CLIENT_SPAN}-01`)
      .send({ model: MODEL, messages: [] });
    expect(res.status).toBe(401);
    const spans = await traceOf(receiver, traceId);
    const auth = byName(spans, 'auth');
    expect(auth.attributes['error.type']).toBe(res.body.error.code);
    expect(auth.attributes['tollgate.refusal.reason']).toBe(res.body.error.message);
    const server = byName(spans, 'POST /v1/chat/completions');
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': res.body.error.code });
    expect(server.statusCode).toBe(0);
    expect(spans.map((s) => s.name).sort()).toEqual(['POST /v1/chat/completions', 'auth']);
  });

  it('shows the limits that applied and the decision: admitted, then refused with the 429 reason', async () => {
    const send = (traceId: string) =>
      request(stack.gw.url)
        .post('/v1/chat/completions')
        .set('authorization', bearer(KEYS.teamB))
        .set('content-type', 'application/json')
        .set('traceparent', `00-${traceId}-${CLIENT_SPAN}-01`)
        .send(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));
    const admitted = 'eeee0000000000000000000000000001';
    const refused = 'eeee0000000000000000000000000002';
    expect((await send(admitted)).status).toBe(200);
    const res = await send(refused);
    expect(res.status).toBe(429);
    expect(byName(await traceOf(receiver, admitted), 'limits').attributes).toMatchObject({
      'tollgate.limits.decision': 'admitted',
      'tollgate.limits.scopes': ['project'],
      'tollgate.limits.checks': ['project:rpm'],
    });
    const spans = await traceOf(receiver, refused);
    expect(byName(spans, 'limits').attributes).toMatchObject({
      'tollgate.limits.decision': 'refused',
      'error.type': res.body.error.code,
      'tollgate.refusal.reason': res.body.error.message,
    });
    expect(byName(spans, 'POST /v1/chat/completions').attributes).toMatchObject({ 'http.response.status_code': 429, 'error.type': res.body.error.code });
    expect(spans.some((s) => s.kind === SPAN_KIND.client)).toBe(false);
  });

  it('makes a SERVER span, named by the method alone, with its reason, for a /v1 path no route knows (404) or an unsafe one (400)', async () => {
    const cases = [
      { traceId: '40400000000000000000000000000001', path: '/v1/no-such-route?x=1', status: 404, urlPath: '/v1/no-such-route' },
      { traceId: '40000000000000000000000000000001', path: '/v1/preview/models/a%2fb', status: 400, urlPath: '/v1/preview/models/a%2fb' },
    ];
    for (const { traceId, path, status, urlPath } of cases) {
      const res = await request(stack.gw.url).get(path).set('traceparent', `00-${traceId}-${CLIENT_SPAN}-01`);
      expect(res.status).toBe(status);
      const spans = await traceOf(receiver, traceId);
      expect(spans.map((s) => s.name)).toEqual(['GET']);
      const [server] = spans;
      expect(server!.kind).toBe(SPAN_KIND.server);
      expect(server!.parentSpanId).toBe(CLIENT_SPAN);
      expect(server!.statusCode).toBe(0);
      expect(server!.attributes).toEqual({
        'http.request.method': 'GET',
        'url.path': urlPath,
        'url.scheme': 'http',
        'http.response.status_code': status,
        'error.type': res.body.error.code,
        'tollgate.refusal.reason': res.body.error.message,
      });
    }
  });

  it('makes a SERVER span with the route its path matched for a 405, and an unknown method is _OTHER (named HTTP)', async () => {
    const traceId = '40500000000000000000000000000001';
    const res = await request(stack.gw.url).delete('/v1/models').set('traceparent', `00-${traceId}-${CLIENT_SPAN}-01`);
    expect(res.status).toBe(405);
    const [server, ...others] = await traceOf(receiver, traceId);
    expect(others).toEqual([]);
    expect(server!.name).toBe('DELETE /v1/models');
    expect(server!.attributes).toMatchObject({
      'http.request.method': 'DELETE',
      'http.route': '/v1/models',
      'http.response.status_code': 405,
      'error.type': 'method_not_allowed',
      'tollgate.refusal.reason': res.body.error.message,
    });

    const other = '40500000000000000000000000000002';
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest(`${stack.gw.url}/v1/models`, { method: 'PROPFIND', headers: { traceparent: `00-${other}-${CLIENT_SPAN}-01` } }, (reply) => {
        reply.resume().on('end', () => resolve(reply.statusCode));
      });
      req.on('error', reject).end();
    });
    expect(status).toBe(405);
    const [propfind] = await traceOf(receiver, other);
    expect(propfind!.name).toBe('HTTP /v1/models');
    expect(propfind!.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'PROPFIND', 'http.response.status_code': 405 });
  });

  it('marks a failed upstream hop as an error on the SERVER span', async () => {
    const traceId = '99998888777766665555444433332222';
    const res = await chat(stack, {}, { traceparent: `00-${traceId}-${CLIENT_SPAN}-01`, 'x-fixture-mode': 'reset' });
    expect(res.status).toBe(502);
    const spans = await traceOf(receiver, traceId);
    const server = byName(spans, 'POST /v1/chat/completions');
    const client = byName(spans, `chat ${MODEL}`);
    expect([server.statusCode, client.statusCode]).toEqual([2, 2]);
    expect(server.attributes['error.type']).toBe('upstream_unavailable');
    expect(server.statusMessage).toBe(server.attributes['tollgate.refusal.reason']);
    expect(client.statusMessage).toBe(server.statusMessage);
  });
});

describe('tracing the ownership step', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack({ ...tracingConfig(receiver), ownership: { mode: 'on' } });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it("gives it a span: ended when the owner asks, refused with the 404's reason when another team does", async () => {
    const created = await request(stack.gw.url)
      .post('/v1/preview/models')
      .set('authorization', bearer(KEYS.teamA))
      .send({ entity: 'acme', project: 'p', name: 'n', base_model: 'b' });
    expect(created.status).toBe(200);
    const path = `/v1/preview/models/${created.body.id as string}/checkpoints`;
    const owner = '21112222333344445555666677778888';
    const other = '31112222333344445555666677778888';
    expect((await request(stack.gw.url).get(path).set('authorization', bearer(KEYS.teamA)).set('traceparent', `00-${owner}-${CLIENT_SPAN}-01`)).status).toBe(200);
    const refused = await request(stack.gw.url).get(path).set('authorization', bearer(KEYS.teamB)).set('traceparent', `00-${other}-${CLIENT_SPAN}-01`);
    expect(refused.status).toBe(404);

    const allowed = await traceOf(receiver, owner);
    expect(allowed.filter((s) => s.kind === SPAN_KIND.internal).map((s) => s.name).sort()).toEqual(['auth', 'limits', 'ownership', 'validate']);
    expect(byName(allowed, 'ownership')).toMatchObject({ statusCode: 0, attributes: {} });
    // Refused at ownership: the limits step never ran.
    const spans = await traceOf(receiver, other);
    expect(spans.filter((s) => s.kind === SPAN_KIND.internal).map((s) => s.name).sort()).toEqual(['auth', 'ownership', 'validate']);
    expect(byName(spans, 'ownership').attributes).toEqual({ 'error.type': refused.body.error.code, 'tollgate.refusal.reason': refused.body.error.message });
  });
});

describe('tracing with captureContent and the GenAI metrics', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack(tracingConfig(receiver, { captureContent: true, metrics: true, metricsIntervalMs: 50 }));
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it('puts the prompt and the completion on the CLIENT span', async () => {
    const traceId = 'cccc0000cccc0000cccc0000cccc0000';
    expect((await chat(stack, {}, { traceparent: `00-${traceId}-${CLIENT_SPAN}-01` })).status).toBe(200);
    const client = byName(await traceOf(receiver, traceId), `chat ${MODEL}`);
    expect(JSON.parse(String(client.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'how is the loss?' }] }]);
    expect(JSON.parse(String(client.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'The loss went down.' }], finish_reason: 'stop' },
    ]);
  });

  it('exports gen_ai.client.token.usage, gen_ai.server.request.duration and gen_ai.server.time_to_first_token over OTLP', async () => {
    expect((await chat(stack, { stream: true, stream_options: { include_usage: true } })).status).toBe(200);
    const wanted = ['gen_ai.client.token.usage', 'gen_ai.server.request.duration', 'gen_ai.server.time_to_first_token'];
    while (!wanted.every((name) => receiver.metricNames.has(name))) await new Promise((resolve) => receiver.once('metrics', resolve));
    expect([...receiver.metricNames].filter((name) => name.startsWith('gen_ai.')).sort()).toEqual(wanted.sort());
  });
});

describe('a collector that is down, failing or slow', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack(tracingConfig(receiver, { exportTimeoutMs: 300 }));
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  const dropped = () => metricValue(stack.gw.url, 'tollgate_trace_spans_dropped_total');

  /** Sends a chat while the collector is in `mode`; the request is answered in full whatever the collector does. */
  async function chatWhile(mode: OtlpReceiver['mode']): Promise<void> {
    receiver.mode = mode;
    const exportsBefore = receiver.exports;
    const res = await chat(stack, {});
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('The loss went down.');
    await receiver.exportsReached(exportsBefore + 1);
  }

  async function droppedPast(before: number): Promise<number> {
    for (;;) {
      const now = await dropped();
      if (now > before) return now;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('answers requests and counts the spans a 500 lost', async () => {
    const before = await dropped();
    await chatWhile('error-500');
    expect(await droppedPast(before)).toBeGreaterThan(before);
  });

  it('answers requests and counts the spans of an export that timed out (a collector holding it 5 s)', async () => {
    const before = await dropped();
    await chatWhile('slow');
    expect(await droppedPast(before)).toBeGreaterThan(before);
  });

  it('answers requests while the collector answers garbage', async () => {
    await chatWhile('garbage');
  });

  it('answers requests and counts the spans while the collector is down', async () => {
    receiver.mode = 'ok';
    const before = await dropped();
    await receiver.close();
    const res = await chat(stack, {});
    expect(res.status).toBe(200);
    expect(await droppedPast(before)).toBeGreaterThan(before);
  });
});

describe('exports of at most maxExportBatchSize spans', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // A chat request is 5 spans here (server, auth, validate, limits, client); the SDK's processor sends an export as soon as 5 are queued.
    stack = await startStack(tracingConfig(receiver, { maxExportBatchSize: 5 }));
  });
  afterAll(async () => {
    await receiver.close();
    await stack.close();
  });

  it('sends the queued spans in exports of at most that many spans', async () => {
    const responses = await Promise.all([chat(stack, {}), chat(stack, {}), chat(stack, {})]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const spans = await receiver.spansWhere(() => true, 15);
    expect(spans).toHaveLength(15);
    expect(receiver.spansPerExport).toEqual([5, 5, 5]);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(3);
  });
});

describe('a full export queue', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    receiver.mode = 'slow';
    // Two spans waiting at most, and a collector that holds the first export: the rest must be dropped, not held.
    stack = await startStack(tracingConfig(receiver, { maxQueueSize: 2 }));
  });
  afterAll(async () => {
    await receiver.close();
    await stack.close();
  });

  it('drops the spans past it and counts them, while requests are answered', async () => {
    for (let i = 0; i < 3; i++) expect((await chat(stack, {})).status).toBe(200);
    await stack.gw.gateway.settled();
    // 3 requests x 5 spans (server, auth, validate, limits, client); at most 2 exported and 2 queued.
    for (;;) {
      const dropped = await metricValue(stack.gw.url, 'tollgate_trace_spans_dropped_total');
      if (dropped >= 11) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(receiver.spans).toEqual([]);
  });
});

describe('trace ids on log lines, and tracing off', () => {
  let receiver: OtlpReceiver;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  const lines: Array<Record<string, unknown>> = [];
  const gateways: Array<{ gateway: Gateway; close(): Promise<void> }> = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    service = await startTrainingService();
    inference = await startInferenceHost();
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await Promise.all([service.close(), inference.close(), receiver.close()]);
  });

  async function start(overrides: Record<string, unknown>): Promise<string> {
    const sink = jsonLineSink(lines);
    const config = testConfig({ service: service.url, inference: inference.url }, overrides);
    const gateway = await createGateway(config, { logger: pino({ level: 'info' }, sink) });
    const server = createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents).listen(0, '127.0.0.1');
    await once(server, 'listening');
    gateways.push({
      gateway,
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await gateway.close();
      },
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const send = (url: string, requestId: string, headers: Record<string, string> = {}) =>
    request(url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(KEYS.teamA))
      .set('content-type', 'application/json')
      .set('x-request-id', requestId)
      .set(headers)
      .send(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));

  it("writes the request's trace_id on its log line", async () => {
    const url = await start(tracingConfig(receiver));
    const traceId = 'dddd1111dddd1111dddd1111dddd1111';
    expect((await send(url, 'traced-log', { traceparent: `00-${traceId}-${CLIENT_SPAN}-01` })).status).toBe(200);
    await gateways.at(-1)!.gateway.settled();
    expect(lines.find((line) => line.requestId === 'traced-log')).toMatchObject({ msg: 'request', trace_id: traceId });
  });

  it('at sampleRatio 0: an unsampled trace id goes upstream and on the log line; a sampled caller is still traced (parent-based)', async () => {
    const url = await start(tracingConfig(receiver, { sampleRatio: 0 }));
    expect((await send(url, 'unsampled')).status).toBe(200);
    const [version, traceId, spanId, flags] = (service.requests.at(-1)!.headers.traceparent as string).split('-');
    expect([version, flags]).toEqual(['00', '00']);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    await gateways.at(-1)!.gateway.settled();
    expect(lines.find((line) => line.requestId === 'unsampled')).toMatchObject({ trace_id: traceId });

    const sampled = 'ffff0000ffff0000ffff0000ffff0000';
    expect((await send(url, 'sampled-parent', { traceparent: `00-${sampled}-${CLIENT_SPAN}-01` })).status).toBe(200);
    const spans = await receiver.spansWhere((span) => span.traceId === sampled && span.kind === SPAN_KIND.server);
    expect(spans[0]!.parentSpanId).toBe(CLIENT_SPAN);
    expect(receiver.spans.filter((span) => span.traceId === traceId)).toEqual([]);
  });

  it('off: no span, no trace_id, and the client traceparent passes to the upstream as it came', async () => {
    const url = await start({ tracing: { enabled: false, endpoint: receiver.url } });
    const traceparent = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
    expect((await send(url, 'untraced', { traceparent })).status).toBe(200);
    await gateways.at(-1)!.gateway.settled();
    expect(service.requests.at(-1)!.headers.traceparent).toBe(traceparent);
    const line = lines.find((l) => l.requestId === 'untraced')!;
    expect(line.msg).toBe('request');
    expect('trace_id' in line).toBe(false);
    expect(receiver.spans.filter((span) => span.traceId === CLIENT_TRACE)).toEqual([]);
  });
});
