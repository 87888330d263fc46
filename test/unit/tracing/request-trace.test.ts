import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { errors, GatewayError } from '../../../src/errors.js';
import { NOTHING_SEEN } from '../../../src/metering/index.js';
import { Tracing } from '../../../src/tracing/index.js';

/**
 * A traced request's spans (RequestTrace.begin, end, refused, startUpstream, finish) as the SDK
 * ends them: caught by the SDK's in-memory exporter behind its simple processor (what the batch
 * processor and OTLP exporter do with them is tracing.test.ts's, against an OTLP receiver).
 */

function traced(sampler: Sampler = new AlwaysOnSampler(), providerNames: Record<string, string> = { service: 'service', inference: 'inference' }): { tracing: Tracing; spans: () => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = new Tracing(provider, new W3CTraceContextPropagator(), {
    captureContent: false,
    providerNames,
    metrics: undefined,
  });
  return { tracing, spans: () => exporter.getFinishedSpans() };
}

const request = { headers: {}, url: '/v1/chat/completions' } as IncomingMessage;
const named = (spans: ReadableSpan[], name: string): ReadableSpan => spans.find((span) => span.name === name)!;

describe('a traced request step', () => {
  it('is a span under the SERVER span from its begin to its end, with the attributes it is described by (none when not described)', () => {
    const { tracing, spans } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.begin('auth');
    trace.end();
    trace.begin('limits');
    trace.end(3, (n) => ({ 'tollgate.limits.decision': 'admitted', n }));
    // An end with no step under way ends nothing.
    trace.end();
    trace.finish({ status: 200, aborted: false });
    const ended = spans();
    expect(ended.map((span) => [span.name, span.kind, span.attributes])).toEqual([
      ['auth', SpanKind.INTERNAL, {}],
      ['limits', SpanKind.INTERNAL, { 'tollgate.limits.decision': 'admitted', n: 3 }],
      ['POST /v1/chat/completions', SpanKind.SERVER, { 'http.request.method': 'POST', 'url.path': '/v1/chat/completions', 'url.scheme': 'http', 'http.route': '/v1/chat/completions', 'http.response.status_code': 200 }],
    ]);
    const server = named(ended, 'POST /v1/chat/completions');
    for (const step of ['auth', 'limits']) {
      expect(named(ended, step).parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(named(ended, step).spanContext().traceId).toBe(trace.traceId);
    }
  });

  it('that refuses the request is ended by the refusal, with its code and reason (an error status when the gateway failed)', () => {
    const failing = traced();
    const failed = failing.tracing.startRequest(request, '/v1/chat/completions', 'POST');
    failed.begin('auth');
    const refusal = errors.internalError();
    failed.refused(refusal);
    failed.finish({ status: 500, aborted: false });
    const auth = named(failing.spans(), 'auth');
    expect(auth.attributes).toEqual({ 'error.type': refusal.code, 'tollgate.refusal.reason': refusal.message });
    expect(auth.status).toEqual({ code: SpanStatusCode.ERROR, message: refusal.message });

    const limiting = traced();
    const limited = limiting.tracing.startRequest(request, '/v1/chat/completions', 'POST');
    limited.begin('auth');
    limited.end();
    limited.begin('limits');
    limited.refused(new GatewayError(429, 'rate_limit_exceeded', 'Rate limit reached for requests'));
    limited.finish({ status: 429, aborted: false });
    const ended = limiting.spans();
    expect(named(ended, 'limits').attributes).toEqual({ 'error.type': 'rate_limit_exceeded', 'tollgate.refusal.reason': 'Rate limit reached for requests', 'tollgate.limits.decision': 'refused' });
    expect(named(ended, 'limits').status.code).toBe(SpanStatusCode.UNSET);
    expect(named(ended, 'POST /v1/chat/completions').attributes).toMatchObject({ 'error.type': 'rate_limit_exceeded', 'http.response.status_code': 429 });
  });

  it('of a request that is not sampled makes no span and describes nothing, but has a trace id to send on', () => {
    const { tracing, spans } = traced(new AlwaysOffSampler());
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    let described = 0;
    trace.begin('limits');
    trace.end(1, () => ({ described: ++described }));
    trace.startUpstream({ upstream: 'service', method: 'GET' });
    const headers: OutgoingHttpHeaders = {};
    trace.injectInto(headers);
    trace.finish({ status: 200, aborted: false });
    expect(described).toBe(0);
    expect(spans()).toEqual([]);
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(headers.traceparent).toMatch(new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-00$`));
  });

  it('under way when the request ends (the client left) ends with it; what comes after is not on the spans', () => {
    const { tracing, spans } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.begin('auth');
    trace.end();
    trace.begin('limits');
    trace.startUpstream({ upstream: 'service', method: 'GET' });
    trace.finish({ status: 499, aborted: true });
    trace.end();
    trace.upstreamAnswered(200);
    trace.refused(errors.internalError());
    const ended = spans();
    expect(ended.map((span) => span.name)).toEqual(['auth', 'limits', 'GET', 'POST /v1/chat/completions']);
    expect(named(ended, 'GET').attributes).toEqual({ 'http.request.method': 'GET', 'tollgate.upstream': 'service', 'tollgate.aborted': true });
    expect(named(ended, 'POST /v1/chat/completions').status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe('the upstream hop', () => {
  it('names its provider by providerNames, and a named upstream not listed there by its config name (SPEC 22)', () => {
    const { tracing, spans } = traced(new AlwaysOnSampler(), { service: 'openpipe' });
    for (const upstream of ['service', 'vllm']) {
      const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
      trace.startUpstream({ upstream, method: 'POST', chat: { model: upstream, sampling: {}, raw: undefined } });
      trace.finish({ status: 200, aborted: false });
    }
    expect(named(spans(), 'chat service').attributes['gen_ai.provider.name']).toBe('openpipe');
    expect(named(spans(), 'chat vllm').attributes['gen_ai.provider.name']).toBe('vllm');
  });

  it('is a CLIENT span whose context goes upstream, with the reply read as the request ended (bytes relayed after it are not the reply)', () => {
    const { tracing, spans } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'm', sampling: { maxTokens: 5 }, raw: undefined } });
    const headers: OutgoingHttpHeaders = {};
    trace.injectInto(headers);
    const relay = trace.watchReply({ rewrites: false, write: (chunk) => chunk, end: () => NOTHING_SEEN }, false);
    relay.write(Buffer.from('{"id":"chatcmpl-1","choices":[{"finish_reason":"st'));
    relay.write(Buffer.from('op"}]}'));
    trace.finish({ status: 200, aborted: false, team: 'team-a', project: 'prod', inputTokens: 3, outputTokens: 4, responseModel: 'm-1', costNanos: 2_500_000_000 });
    relay.write(Buffer.from('{"id":"later"}'));
    const client = named(spans(), 'chat m');
    expect(client.kind).toBe(SpanKind.CLIENT);
    expect(headers.traceparent).toBe(`00-${trace.traceId}-${client.spanContext().spanId}-01`);
    expect(client.attributes).toEqual({
      'http.request.method': 'POST',
      'tollgate.upstream': 'inference',
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'inference',
      'gen_ai.request.model': 'm',
      'gen_ai.request.max_tokens': 5,
      'gen_ai.response.model': 'm-1',
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 4,
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.finish_reasons': ['stop'],
      'tollgate.team': 'team-a',
      'tollgate.project': 'prod',
      'tollgate.cost': 2.5,
    });
  });
});
