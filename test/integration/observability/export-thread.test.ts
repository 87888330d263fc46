import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EndedTrace, RequestRecord } from '../../../src/tracing/export-messages.js';
import { ExportThread } from '../../../src/tracing/export-thread.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../../fixtures/otlp-receiver.js';

/**
 * The export thread on its own (src/tracing/export-thread.ts and export-worker.ts): records of
 * traced requests in, OTLP protobuf out through the SDK's OTLP/HTTP delegate to a receiver that
 * decodes it; its bound in spans; a thread that cannot start. The gateway-level cases are in
 * tracing.test.ts.
 */

const TRACE = '0af7651916cd43dd8448eb211c80319c';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

function record(n: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  const start = performance.now();
  const id = (k: number): string => (n * 16 + k).toString(16).padStart(16, '0');
  // Span times are whole µs after the request's start.
  return {
    traceId: TRACE,
    start,
    server: { id: id(1), name: 'POST /v1/chat/completions', start: 0, end: 9000, attributes: { 'http.response.status_code': 200, 'tollgate.team': 'team-a' } },
    steps: [
      { name: 'auth', start: 1000, end: 2000, attributes: {} },
      { name: 'limits', start: 2000, end: 3500, attributes: { 'tollgate.limits.checks': ['key:rpm', 'team:tpm'] }, error: 'store down' },
    ],
    client: { id: id(4), name: 'chat m', start: 3000, end: 8000, attributes: { 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 12 } },
    ...extra,
  };
}

/** A request that ended with this record (the export thread builds it when it ships). */
const ended = (record: RequestRecord): EndedTrace => ({ spanCount: () => 1 + record.steps.length + (record.client ? 1 : 0), record: () => record });

describe('the export thread', () => {
  let receiver: OtlpReceiver;
  let dropped: number;
  let thread: ExportThread;
  const settingsFor = (maxQueueSize: number) => ({
    url: `${receiver.url}/v1/traces`,
    headers: { 'x-collector-key': 'k1' },
    serviceName: 'tollgate-test',
    timeOrigin: performance.timeOrigin,
    maxQueueSize,
    maxExportBatchSize: Math.min(512, maxQueueSize),
    scheduledDelayMillis: 20,
    exportTimeoutMillis: 10_000,
  });

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
    dropped = 0;
  });
  afterEach(async () => {
    await thread.shutdown();
    await receiver.close();
  });

  it('exports each record as its spans: ids, parents, kinds, times on the wall clock, attributes, error status', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    const sent = record(1, { parent: { spanId: '00f067aa0ba902b7', traceState: 'vendor=abc' } });
    const wallAtStart = BigInt(Math.round((performance.timeOrigin + sent.start) * 1000)) * 1000n;
    thread.add(ended(sent));
    await thread.flush();
    const spans = await receiver.spansWhere((s) => s.traceId === TRACE, 4);
    expect(receiver.lastHeaders['x-collector-key']).toBe('k1');
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const server = byId.get(sent.server.id)!;
    expect(server).toMatchObject({ name: 'POST /v1/chat/completions', kind: SPAN_KIND.server, parentSpanId: '00f067aa0ba902b7', traceState: 'vendor=abc', statusCode: 0 });
    expect(server.resource['service.name']).toBe('tollgate-test');
    expect(server.attributes).toEqual({ 'http.response.status_code': 200, 'tollgate.team': 'team-a' });
    // Within a microsecond of the request thread's clock (HrTime keeps nanoseconds; the test's rounding does not).
    expect(Number(server.startTime - wallAtStart)).toBeGreaterThan(-1000);
    expect(Number(server.startTime - wallAtStart)).toBeLessThan(1000);
    expect(server.endTime - server.startTime).toBe(9_000_000n);

    // The steps' ids are the export thread's: found by name, each new.
    const auth = spans.find((s) => s.name === 'auth')!;
    const limits = spans.find((s) => s.name === 'limits')!;
    expect(auth).toMatchObject({ kind: SPAN_KIND.internal, parentSpanId: sent.server.id, statusCode: 0 });
    expect(auth.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(4);
    expect([auth.startTime - server.startTime, auth.endTime - server.startTime]).toEqual([1_000_000n, 2_000_000n]);
    expect(limits).toMatchObject({ statusCode: 2, statusMessage: 'store down', attributes: { 'tollgate.limits.checks': ['key:rpm', 'team:tpm'] } });
    expect(limits.endTime - limits.startTime).toBe(1_500_000n);
    expect(byId.get(sent.client!.id)).toMatchObject({ name: 'chat m', kind: SPAN_KIND.client, parentSpanId: sent.server.id, attributes: { 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 12 } });
    expect(dropped).toBe(0);
  });

  it('a root request (no caller span) has no parent and no tracestate', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    const sent = record(2, { client: undefined, steps: [] });
    thread.add(ended(sent));
    await thread.flush();
    const [server] = await receiver.spansWhere((s) => s.spanId === sent.server.id);
    expect(server).toMatchObject({ parentSpanId: '', traceState: '' });
  });

  it('sends shipment after shipment intact: one at a time, six full ones back to back, and one of 300 KB', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    const sent: RequestRecord[] = [];
    const send = (r: RequestRecord): void => {
      sent.push(r);
      thread.add(ended(r));
    };
    // One shipment at a time…
    for (let shipment = 0; shipment < 5; shipment++) {
      for (let i = 0; i < 3; i++) send(record(100 + shipment * 3 + i));
      await thread.flush();
    }
    // …six full ones back to back (64 requests each, posted before the thread has taken the first)…
    for (let i = 0; i < 6 * 64; i++) send(record(200 + i));
    // …and one with a 300 KB attribute.
    const large = record(900);
    send({ ...large, server: { ...large.server, attributes: { ...large.server.attributes, 'gen_ai.output.messages': 'x'.repeat(300 * 1024) } } });
    await thread.flush();
    const servers = await receiver.spansWhere((s) => s.kind === SPAN_KIND.server, sent.length);
    expect(servers.map((s) => s.spanId).sort()).toEqual(sent.map((r) => r.server.id).sort());
    expect(servers.every((s) => s.name === 'POST /v1/chat/completions' && s.attributes['tollgate.team'] === 'team-a')).toBe(true);
    expect(servers.find((s) => s.spanId === large.server.id)!.attributes['gen_ai.output.messages']).toBe('x'.repeat(300 * 1024));
    expect(receiver.spans).toHaveLength(sent.length * 4);
    expect(dropped).toBe(0);
  });

  it('holds at most maxQueueSize spans on their way: a request that would pass it is dropped whole and counted', async () => {
    thread = new ExportThread(settingsFor(6), { spansDropped: (n) => (dropped += n) });
    // 4 spans each: the first fits, the second would make 8 of 6.
    thread.add(ended(record(3)));
    thread.add(ended(record(4)));
    expect(dropped).toBe(4);
  });

  it('drops and counts a request whose ids cannot be written, and sends the others it waited with', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    const good = record(5);
    thread.add(ended(good));
    thread.add(ended(record(6, { traceId: 'not-hex-not-hex-not-hex-not-hex-' })));
    thread.add(ended(record(7, { client: undefined })));
    await thread.flush();
    const spans = await receiver.spansWhere((s) => s.traceId === TRACE, 7);
    expect(spans).toHaveLength(7);
    expect(spans.filter((s) => s.kind === SPAN_KIND.server).map((s) => s.spanId)).toEqual([good.server.id, record(7).server.id]);
    expect(dropped).toBe(4);
  });

  it('drops and counts a request whose record cannot be built, and sends the others it waited with', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    const good = record(9);
    thread.add(ended(good));
    thread.add({
      spanCount: () => 4,
      record: () => {
        throw new Error('a record that cannot be built');
      },
    });
    await thread.flush();
    const spans = await receiver.spansWhere((s) => s.traceId === TRACE, 4);
    expect(spans.filter((s) => s.kind === SPAN_KIND.server).map((s) => s.spanId)).toEqual([good.server.id]);
    expect(dropped).toBe(4);
  });

  it.runIf(process.platform === 'linux')('runs at a lower priority than the threads answering requests (10 nice steps lower)', async () => {
    const base = getPriority();
    const lowered = Math.min(19, base + 10);
    const before = threadNiceValues().filter((nice) => nice === lowered).length;
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) });
    // A flush is answered once the thread has set itself up (lowering its priority comes first).
    await thread.flush();
    expect(threadNiceValues().filter((nice) => nice === lowered).length).toBe(before + (lowered === base ? 0 : 1));
    expect(getPriority()).toBe(base);
  });

  it('ends a thread that outgrows its heap bound, counts what it held as dropped, and starts a new one', async () => {
    const outgrows = new URL('../../fixtures/workers/export-thread-that-outgrows-its-heap.mjs', import.meta.url);
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) }, outgrows);
    thread.add(ended(record(7)));
    // Answered when the thread ends: it took the batch and never reported it taken.
    await thread.flush();
    expect(dropped).toBe(4);
    // A new thread took over: the next request is queued for it, not dropped at once.
    thread.add(ended(record(8)));
    expect(dropped).toBe(4);
    await thread.flush();
    expect(dropped).toBe(8);
  });

  it('drops and counts every span when its thread cannot start, and still shuts down', async () => {
    thread = new ExportThread(settingsFor(2048), { spansDropped: (n) => (dropped += n) }, new URL('../../fixtures/workers/export-thread-that-cannot-start.mjs', import.meta.url));
    thread.add(ended(record(5)));
    // The flush is answered when the thread ends, after what it never took is counted.
    await thread.flush();
    expect(dropped).toBe(4);
    thread.add(ended(record(6)));
    expect(dropped).toBe(8);
    expect(receiver.exports).toBe(0);
  });
});
