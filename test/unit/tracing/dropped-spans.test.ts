import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { batchSettings } from '../../../src/tracing/index.js';

/**
 * The SDK's BatchSpanProcessor, with the settings Tollgate gives it, reports every span it gives
 * up — a full queue, a failed export — through `spansDropped`, exactly once each, and nothing
 * for the spans it exported.
 */

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';

/** An exporter whose exports wait until the test answers them. */
function heldExporter(): SpanExporter & { answer(code: ExportResultCode): void; batches: number[] } {
  const waiting: ((result: ExportResult) => void)[] = [];
  const batches: number[] = [];
  return {
    batches,
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      batches.push(spans.length);
      waiting.push(done);
    },
    answer(code) {
      for (const done of waiting.splice(0)) done(code === ExportResultCode.SUCCESS ? { code } : { code, error: new Error('collector refused') });
    },
    shutdown: async () => undefined,
  };
}

function tracerWith(tracing: string): { end(spans: number): void; dropped: () => number; exporter: ReturnType<typeof heldExporter> } {
  let dropped = 0;
  const exporter = heldExporter();
  const config = parseConfig(`${minimal}tracing: ${tracing}\n`, {}).tracing;
  const processor = new BatchSpanProcessor(exporter, batchSettings(config, { spansDropped: (count) => (dropped += count) }));
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
  return { end: (spans) => Array.from({ length: spans }, () => tracer.startSpan('s').end()), dropped: () => dropped, exporter };
}

describe('spans the batch processor gives up', () => {
  it('are counted when its queue is full: each span past the bound, once', () => {
    const { end, dropped, exporter } = tracerWith('{maxQueueSize: 4, maxExportBatchSize: 2}');
    // Two leave at once (a full batch) and wait at the collector; four more fill the queue.
    end(9);
    expect(exporter.batches).toEqual([2]);
    expect(dropped()).toBe(3);
  });

  it('are counted when their export fails, and not when it succeeds', async () => {
    const { end, dropped, exporter } = tracerWith('{maxQueueSize: 10, maxExportBatchSize: 2}');
    end(2);
    exporter.answer(ExportResultCode.SUCCESS);
    // The processor takes the next batch once its promise chain for this one has settled.
    await new Promise(setImmediate);
    expect(dropped()).toBe(0);
    end(2);
    exporter.answer(ExportResultCode.FAILED);
    expect(exporter.batches).toEqual([2, 2]);
    expect(dropped()).toBe(2);
  });
});
