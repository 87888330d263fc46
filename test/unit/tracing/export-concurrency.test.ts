import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { batchSettings, otlpExporter } from '../../../src/tracing/index.js';

/**
 * A collector that never answers: every export times out and fails. The SDK's batch processor
 * then starts its next export before the last has ended (a flag its failure path clears), and
 * without a bound the exports pile up, each holding its batch. Tollgate's exporter keeps at most
 * one queue's worth in flight (maxQueueSize ÷ maxExportBatchSize): here 2.
 */

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';

describe('exports to a collector that holds them', () => {
  const held = new Set<IncomingMessage>();
  let mostHeld = 0;
  let received = 0;
  const server = createServer((req) => {
    received += 1;
    held.add(req);
    mostHeld = Math.max(mostHeld, held.size);
    req.resume();
    req.socket.once('close', () => held.delete(req));
  });
  let url = '';

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('never has more than a queue of them in flight, while every span past it is counted as dropped', async () => {
    const config = parseConfig(`${minimal}tracing: {endpoint: "${url}", maxQueueSize: 4, maxExportBatchSize: 2, exportTimeoutMs: 50, scheduledDelayMs: 5}\n`, {}).tracing;
    let dropped = 0;
    const batch = batchSettings(config, { spansDropped: (count) => (dropped += count) });
    const tracer = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(otlpExporter(config, batch), batch)] }).getTracer('test');
    const endSpans = (count: number): void => {
      for (let i = 0; i < count; i++) tracer.startSpan('s').end();
    };
    // Spans keep coming, a batch's worth a turn of the event loop, until the collector has held 12 exports.
    while (received < 12) {
      endSpans(2);
      await new Promise(setImmediate);
    }
    expect(mostHeld).toBeLessThanOrEqual(2);
    expect(dropped).toBeGreaterThan(0);
  });
});
