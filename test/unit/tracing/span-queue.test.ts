import { EventEmitter, once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EncodedRequests, RequestRecord } from '../../../src/tracing/export-messages.js';
import { exportEnvelope } from '../../../src/tracing/otlp-export.js';
import { OtlpSpanEncoder } from '../../../src/tracing/otlp-spans.js';
import { ProtobufWriter } from '../../../src/tracing/protobuf-writer.js';
import { SpanQueue, type EncodedExport, type SpanExportDelegate, type SpanQueueSettings } from '../../../src/tracing/span-queue.js';
import { decodeTraceRequest } from '../../fixtures/otlp-receiver.js';
import { tapeOf } from '../../fixtures/tape-spans.js';

/**
 * The export thread's queue (src/tracing/span-queue.ts) between encoded requests and the SDK's
 * OTLP/HTTP delegate: batches of whole requests up to maxExportBatchSize, a full batch at once and
 * a partial one after the delay, one export at a time, the bound, and every lost span counted.
 * The delegate here keeps each export (decoded with the published proto definitions) and answers
 * as told; the real one, against a collector, is in tracing.test.ts and export-thread.test.ts.
 */

/** A request of `steps` + 1 spans whose SERVER span is named `name`. */
const request = (name: string, steps: number): RequestRecord => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  start: 1,
  server: { id: 'b7ad6b7169203331', name, start: 0, end: 100, attributes: {} },
  steps: Array.from({ length: steps }, (_, i) => ({ name: `step ${i}`, start: i, end: i + 1, attributes: {} })),
});

/** Requests as the request thread ships them. */
function encoded(...records: RequestRecord[]): EncodedRequests {
  const writer = new ProtobufWriter(64);
  const encoder = new OtlpSpanEncoder(writer, 1_764_000_000_000);
  encoder.startTape(tapeOf(records));
  const ends: number[] = [];
  for (const _ of records) {
    expect(encoder.write()).toBe(true);
    ends.push(writer.pos);
  }
  return { bytes: Uint8Array.from(writer.view(0, writer.pos)), ends, spans: records.map((record) => record.steps.length + 1) };
}

/** A delegate that keeps what it is given: each export's SERVER span names, and its answer to give (true, false, or never). */
class KeptExports extends EventEmitter implements SpanExportDelegate {
  readonly batches: string[][] = [];
  answer: boolean | 'never' = true;
  flushed = 0;

  export(batch: EncodedExport, done: (exported: boolean) => void): void {
    const spans = decodeTraceRequest(batch.request);
    expect(spans.length).toBe(batch.spans);
    this.batches.push(spans.filter((span) => span.parentSpanId === '').map((span) => span.name));
    if (this.answer !== 'never') done(this.answer);
    this.emit('export');
  }

  async forceFlush(): Promise<void> {
    this.flushed += 1;
  }

  async shutdown(): Promise<void> {}
}

const SETTINGS: SpanQueueSettings = { maxQueueSize: 20, maxExportBatchSize: 8, scheduledDelayMillis: 10, exportTimeoutMillis: 10_000 };

function queueOf(settings: Partial<SpanQueueSettings> = {}) {
  const delegate = new KeptExports();
  const lost: number[] = [];
  const queue = new SpanQueue({ ...SETTINGS, ...settings }, exportEnvelope('tollgate-test', 'tollgate'), delegate, (count) => lost.push(count));
  return { queue, delegate, lost };
}

describe('the export queue', () => {
  it('sends a full batch at once, of whole requests up to maxExportBatchSize spans, and the rest after the delay', async () => {
    const { queue, delegate, lost } = queueOf();
    // 3 + 3 + 3 spans: the first two requests make a batch of 6 (9 would pass 8); the third waits.
    queue.add(encoded(request('a', 2), request('b', 2), request('c', 2)));
    expect(delegate.batches).toEqual([['a', 'b']]);
    await once(delegate, 'export');
    expect(delegate.batches).toEqual([['a', 'b'], ['c']]);
    expect(lost).toEqual([]);
  });

  it('sends a request larger than a batch on its own', async () => {
    const { queue, delegate } = queueOf();
    queue.add(encoded(request('big', 11)));
    expect(delegate.batches).toEqual([['big']]);
  });

  it('drops and counts a request that would pass maxQueueSize, and keeps the others', async () => {
    const { queue, delegate, lost } = queueOf({ maxExportBatchSize: 100 });
    // 9 + 9 fit in 20; the third (9 more) does not; a 2-span one still does.
    queue.add(encoded(request('a', 8), request('b', 8), request('c', 8), request('d', 1)));
    expect(lost).toEqual([9]);
    await queue.flush();
    expect(delegate.batches).toEqual([['a', 'b', 'd']]);
  });

  it('exports what it kept of a shipment that was mostly dropped', async () => {
    const { queue, delegate, lost } = queueOf({ maxExportBatchSize: 100, maxQueueSize: 12 });
    // 9 spans fit, the next two requests (9 each) do not, the last two (1 each) do.
    queue.add(encoded(request('a', 8), request('b', 8), request('c', 8), request('d', 0), request('e', 0)));
    queue.add(encoded(request('f', 0)));
    expect(lost).toEqual([18]);
    await queue.flush();
    expect(delegate.batches).toEqual([['a', 'd', 'e', 'f']]);
  });

  it('makes one batch of requests that came in different shipments, in the order they came', async () => {
    const { queue, delegate } = queueOf({ maxExportBatchSize: 100, maxQueueSize: 100 });
    queue.add(encoded(request('a', 1), request('b', 0)));
    queue.add(encoded(request('c', 2)));
    queue.add(encoded(request('d', 0), request('e', 1)));
    await queue.flush();
    expect(delegate.batches).toEqual([['a', 'b', 'c', 'd', 'e']]);
  });

  it('keeps order across the batches of a long queue', async () => {
    const { queue, delegate, lost } = queueOf({ maxExportBatchSize: 600, maxQueueSize: 10_000, exportTimeoutMillis: 20 });
    // An export that is never answered holds the queue while 2,000 requests (a span each) arrive.
    delegate.answer = 'never';
    queue.add(encoded(...Array.from({ length: 600 }, () => request('held', 0))));
    const names = Array.from({ length: 2000 }, (_, i) => `r${i}`);
    for (let i = 0; i < names.length; i += 100) queue.add(encoded(...names.slice(i, i + 100).map((name) => request(name, 0))));
    delegate.answer = true;
    await queue.flush();
    expect(lost).toEqual([600]);
    expect(delegate.batches.slice(1).map((batch) => batch.length)).toEqual([600, 600, 600, 200]);
    expect(delegate.batches.slice(1).flat()).toEqual(names);
  });

  it('counts the spans of an export that failed, and goes on with the next', async () => {
    const { queue, delegate, lost } = queueOf();
    delegate.answer = false;
    // 4 + 5 spans: a leaves at once (9 queued), alone (9 would pass 8), and fails.
    queue.add(encoded(request('a', 3), request('b', 4)));
    expect(lost).toEqual([4]);
    delegate.answer = true;
    await once(delegate, 'export');
    expect(delegate.batches).toEqual([['a'], ['b']]);
    expect(lost).toEqual([4]);
  });

  it('gives up an export unanswered after exportTimeoutMillis, counts its spans, and goes on', async () => {
    const { queue, delegate, lost } = queueOf({ exportTimeoutMillis: 30 });
    delegate.answer = 'never';
    queue.add(encoded(request('a', 7)));
    delegate.answer = true;
    queue.add(encoded(request('b', 1)));
    // One export at a time: b waits for a's to end, which its timeout does.
    expect(delegate.batches).toEqual([['a']]);
    await once(delegate, 'export');
    expect(lost).toEqual([8]);
    expect(delegate.batches).toEqual([['a'], ['b']]);
  });

  it('flush sends everything queued, batch after batch, then flushes the delegate', async () => {
    const { queue, delegate, lost } = queueOf({ scheduledDelayMillis: 60_000 });
    queue.add(encoded(request('a', 1), request('b', 1), request('c', 1)));
    queue.add(encoded(request('d', 1), request('e', 1)));
    await queue.flush();
    expect(delegate.batches).toEqual([['a', 'b', 'c', 'd'], ['e']]);
    expect(delegate.flushed).toBe(1);
    expect(lost).toEqual([]);
  });
});
