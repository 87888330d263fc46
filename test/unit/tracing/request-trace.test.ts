import { ROOT_CONTEXT, trace, type SpanContext } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import { TraceState, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { errors, GatewayError } from '../../../src/errors.js';
import { NOTHING_SEEN } from '../../../src/metering/index.js';
import type { EndedTrace, RequestRecord } from '../../../src/tracing/export-messages.js';
import type { ExportThread } from '../../../src/tracing/export-thread.js';
import { Tracing } from '../../../src/tracing/index.js';

/**
 * A traced request's steps (RequestTrace.begin, end, refused): each becomes a step of the
 * request's record, with its attributes, or with its refusal when the request was refused during
 * it. The records are caught where the export thread would take them; what they become on the
 * wire is otlp-spans.test.ts's. And the trace context the upstream is sent, held against what the
 * SDK's W3C propagator writes.
 */

/** The ended requests handed to the export thread, and their records, built when read (as the export thread's next shipment builds them). */
function traced(sampler: Sampler = new AlwaysOnSampler()): { tracing: Tracing; records: () => RequestRecord[] } {
  const ended: EndedTrace[] = [];
  const records = (): RequestRecord[] => ended.map((trace) => trace.record());
  const exportThread = { add: (trace: EndedTrace) => void ended.push(trace) } as unknown as ExportThread;
  const tracing = new Tracing(exportThread, new W3CTraceContextPropagator(), sampler, {
    captureContent: false,
    providerNames: { service: 'service', inference: 'inference' },
    metrics: undefined,
  });
  return { tracing, records };
}

const request = { headers: {}, url: '/v1/chat/completions' } as IncomingMessage;

describe('a traced request step', () => {
  it('is recorded from its begin to its end, with the attributes it is described by (none when not described)', () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.begin('auth');
    trace.end();
    trace.begin('limits');
    trace.end(3, (n) => ({ 'tollgate.limits.decision': 'admitted', n }));
    // An end with no step under way notes nothing.
    trace.end();
    trace.finish({ status: 200, aborted: false });
    const steps = records()[0]!.steps;
    expect(steps.map(({ name, attributes, error }) => ({ name, attributes, error }))).toEqual([
      { name: 'auth', attributes: {}, error: undefined },
      { name: 'limits', attributes: { 'tollgate.limits.decision': 'admitted', n: 3 }, error: undefined },
    ]);
    expect(steps[1]!.end).toBeGreaterThanOrEqual(steps[1]!.start);
    expect(steps[1]!.start).toBeGreaterThanOrEqual(steps[0]!.end);
  });

  it('that refuses the request is ended by the refusal, with its code and reason (an error status when the gateway failed)', () => {
    const failing = traced();
    const failed = failing.tracing.startRequest(request, '/v1/chat/completions', 'POST');
    failed.begin('auth');
    const refusal = errors.internalError();
    failed.refused(refusal);
    failed.finish({ status: 500, aborted: false });
    expect(failing.records()[0]!.steps).toMatchObject([
      { name: 'auth', attributes: { 'error.type': refusal.code, 'tollgate.refusal.reason': refusal.message }, error: refusal.message },
    ]);

    const limiting = traced();
    const limited = limiting.tracing.startRequest(request, '/v1/chat/completions', 'POST');
    limited.begin('auth');
    limited.end();
    limited.begin('limits');
    limited.refused(new GatewayError(429, 'rate_limit_exceeded', 'Rate limit reached for requests'));
    limited.finish({ status: 429, aborted: false });
    const [record] = limiting.records();
    expect(record!.steps).toMatchObject([
      { name: 'auth', attributes: {}, error: undefined },
      {
        name: 'limits',
        attributes: { 'error.type': 'rate_limit_exceeded', 'tollgate.refusal.reason': 'Rate limit reached for requests', 'tollgate.limits.decision': 'refused' },
        error: undefined,
      },
    ]);
    expect(record!.server.attributes).toMatchObject({ 'error.type': 'rate_limit_exceeded', 'http.response.status_code': 429 });
  });

  it('of a request that is not sampled notes nothing and describes nothing', () => {
    const { tracing, records } = traced(new AlwaysOffSampler());
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    let described = 0;
    trace.begin('limits');
    trace.end(1, () => ({ described: ++described }));
    trace.finish({ status: 200, aborted: false });
    expect(described).toBe(0);
    expect(records()).toEqual([]);
  });

  it('leaves out of an ended request what ends after it (a step, the upstream\'s status): its record is written later, with others', () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.begin('auth');
    trace.end();
    trace.begin('limits');
    trace.startUpstream({ upstream: 'service', method: 'GET' });
    // The client left: the request ends while its limits step and the upstream are under way.
    trace.finish({ status: 499, aborted: true });
    trace.end();
    trace.upstreamAnswered(200);
    const [record] = records();
    expect(record!.steps.map((step) => step.name)).toEqual(['auth']);
    expect(record!.client!.attributes).toEqual({ 'http.request.method': 'GET', 'tollgate.upstream': 'service', 'tollgate.aborted': true });
  });

  it('builds its record from what the request ended with: reply bytes relayed or a failure reported after the end are not in it', async () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'm', sampling: {}, raw: undefined } });
    const relay = trace.watchReply({ rewrites: false, write: (chunk) => chunk, end: () => NOTHING_SEEN }, false);
    relay.write(Buffer.from('{"id":"chatcmpl-1","choices":[{"finish_reason":"st'));
    trace.finish({ status: 200, aborted: true });
    relay.write(Buffer.from('op"}]}'));
    trace.refused(errors.internalError());
    const [record] = records();
    expect(record!.server).toMatchObject({ error: undefined, attributes: { 'http.response.status_code': 200 } });
    expect(record!.server.attributes['error.type']).toBeUndefined();
    expect(record!.client!.attributes).toMatchObject({ 'gen_ai.response.id': 'chatcmpl-1', 'tollgate.aborted': true });
    expect(record!.client!.attributes['gen_ai.response.finish_reasons']).toBeUndefined();
  });
});

describe('a traced chat reply', () => {
  it('is read when the record is built, or as the request ends when it is long (its bytes are not kept waiting): the same facts either way', () => {
    const content = 'x'.repeat(20 * 1024);
    for (const reply of [`{"id":"chatcmpl-short","choices":[{"finish_reason":"stop"}]}`, `{"id":"chatcmpl-long","choices":[{"message":{"content":"${content}"},"finish_reason":"length"}]}`]) {
      const { tracing, records } = traced();
      const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
      trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'm', sampling: {}, raw: Buffer.from('{}') } });
      const relay = trace.watchReply({ rewrites: false, write: (chunk) => chunk, end: () => NOTHING_SEEN }, false);
      const bytes = Buffer.from(reply);
      relay.write(bytes.subarray(0, 100));
      relay.write(bytes.subarray(100));
      relay.end();
      trace.finish({ status: 200, aborted: false });
      // Bytes relayed after the end are not the reply's, however long it was.
      relay.write(Buffer.from('{"id":"later"}'));
      const attributes = records()[0]!.client!.attributes;
      expect([attributes['gen_ai.response.id'], attributes['gen_ai.response.finish_reasons']]).toEqual(reply.length > 1000 ? ['chatcmpl-long', ['length']] : ['chatcmpl-short', ['stop']]);
    }
  });
});

describe('the trace context sent upstream', () => {
  it.each<[string, SpanContext]>([
    ['sampled', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 }],
    ['not sampled', { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 0 }],
    ['with a tracestate', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, traceState: new TraceState('vendor=one,other=two') }],
    ['with flags beyond sampled', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 3 }],
  ])('is what the SDK\'s W3C propagator writes: %s', (_, span) => {
    const ours: OutgoingHttpHeaders = {};
    traced().tracing.inject(span, ours);
    const sdks: Record<string, string> = {};
    new W3CTraceContextPropagator().inject(trace.setSpanContext(ROOT_CONTEXT, span), sdks, { set: (carrier, key, value) => void (carrier[key] = value) });
    expect(ours).toEqual(sdks);
  });
});
