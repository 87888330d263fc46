import { ROOT_CONTEXT, trace, type SpanContext } from '@opentelemetry/api';
import { AlwaysOnSampler } from '@opentelemetry/sdk-trace-base';
import { TraceState, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { errors, GatewayError } from '../../../src/errors.js';
import { NOTHING_SEEN } from '../../../src/metering/taps/tap.js';
import type { EndedTrace, RequestRecord } from '../../../src/tracing/export-messages.js';
import type { ExportThread } from '../../../src/tracing/export-thread.js';
import { Tracing } from '../../../src/tracing/index.js';

/**
 * A traced request's steps (RequestTrace.step): each becomes a step of the request's record,
 * with its attributes, or with its refusal when the step threw — synchronously or not — and the
 * step's caller gets the same result or error as without tracing. The records are caught where
 * the export thread would take them; what they become on the wire is otlp-spans.test.ts's. And
 * the trace context the upstream is sent, held against what the SDK's W3C propagator writes.
 */

/** The ended requests handed to the export thread, and their records, built when read (as the export thread's next shipment builds them). */
function traced(): { tracing: Tracing; records: () => RequestRecord[] } {
  const ended: EndedTrace[] = [];
  const records = (): RequestRecord[] => ended.map((trace) => trace.record());
  const exportThread = { add: (trace: EndedTrace) => void ended.push(trace) } as unknown as ExportThread;
  const tracing = new Tracing(exportThread, new W3CTraceContextPropagator(), new AlwaysOnSampler(), {
    captureContent: false,
    providerNames: { service: 'service', inference: 'inference' },
    metrics: undefined,
  });
  return { tracing, records };
}

const request = { headers: {}, url: '/v1/chat/completions' } as IncomingMessage;

describe('a traced request step', () => {
  it('hands back what the step gave, and records it with the attributes it is described by (none when not described)', async () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    await expect(trace.step('auth', async () => 'caller')).resolves.toBe('caller');
    await expect(trace.step('limits', async () => 3, (n) => ({ 'tollgate.limits.decision': 'admitted', n }))).resolves.toBe(3);
    trace.finish({ status: 200, aborted: false });
    expect(records()[0]!.steps.map(({ name, attributes, error }) => ({ name, attributes, error }))).toEqual([
      { name: 'auth', attributes: {}, error: undefined },
      { name: 'limits', attributes: { 'tollgate.limits.decision': 'admitted', n: 3 }, error: undefined },
    ]);
  });

  it('records a refusal, rejected or thrown at once, with its code and reason, and passes the same error on', async () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    const refusal = errors.internalError();
    await expect(
      trace.step('auth', () => {
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    const limited = new GatewayError(429, 'rate_limit_exceeded', 'Rate limit reached for requests');
    await expect(trace.step('limits', async () => Promise.reject(limited))).rejects.toBe(limited);
    trace.finish({ status: 429, aborted: false });
    const [auth, limits] = records()[0]!.steps;
    expect(auth).toMatchObject({ name: 'auth', attributes: { 'error.type': refusal.code, 'tollgate.refusal.reason': refusal.message }, error: refusal.message });
    expect(limits).toMatchObject({
      name: 'limits',
      attributes: { 'error.type': 'rate_limit_exceeded', 'tollgate.refusal.reason': 'Rate limit reached for requests', 'tollgate.limits.decision': 'refused' },
      error: undefined,
    });
    expect(auth!.end).toBeGreaterThanOrEqual(auth!.start);
  });

  it('leaves out of an ended request what ends after it (a step, the upstream\'s status): its record is written later, with others', async () => {
    const { tracing, records } = traced();
    const trace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
    await trace.step('auth', async () => 'caller');
    let admit: (value: string) => void = () => undefined;
    const limits = trace.step('limits', () => new Promise<string>((resolve) => (admit = resolve)));
    trace.startUpstream({ upstream: 'service', method: 'GET' });
    // The client left: the request ends while its limits step and the upstream are under way.
    trace.finish({ status: 499, aborted: true });
    admit('admitted');
    await expect(limits).resolves.toBe('admitted');
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
