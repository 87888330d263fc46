import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ExportThreadData, FromExportThread, ToExportThread } from './export-messages.js';
import { exportEnvelope } from './otlp-export.js';
import { OtlpSpanEncoder } from './otlp-spans.js';
import { ProtobufWriter } from './protobuf-writer.js';
import { SpanQueue, type EncodedExport, type SpanExportDelegate } from './span-queue.js';

/**
 * The export thread: traced requests' records arrive on a tape the request thread wrote, a
 * shipment at a time (record-tape.ts), are written here as OTLP protobuf spans straight from it
 * (otlp-spans.ts: the bytes the SDK's serializer writes for them), wait in a bounded queue that batches as the
 * SDK's BatchSpanProcessor does (span-queue.ts), and leave through the SDK's OTLP/HTTP export
 * delegate (its transport, retries, timeout and response handling). The sampling decision and
 * the ids were the request thread's (its SDK sampler and id generator).
 *
 * Why not the SDK's span objects, batch processor and serializer, as before: a ReadableSpan per
 * span, and every message sized before it is written, cost three times what writing the bytes
 * does, and on a busy 2-core machine this thread's CPU is taken from requests (docs/tracing.md, "Cost").
 */
/**
 * Exporting is background work: on Linux the thread lowers its own priority by 10 nice steps
 * (below the process's) so that, when the cores are busy, answering requests comes first. A
 * thread starved for long enough fills its queue and drops spans, which are counted, never held.
 */
const EXPORT_THREAD_NICE_STEPS = 10;

function lowerPriority(): void {
  try {
    // /proc/thread-self is this thread's task: its id is the thread's, which setpriority(2) takes on Linux.
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, Math.min(19, getPriority(threadId) + EXPORT_THREAD_NICE_STEPS));
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

const port = parentPort;
if (port === null) throw new Error('export-worker runs as the export thread of tracing');
const settings = workerData as ExportThreadData;
const spansInFlight = new Int32Array(settings.spansInFlight);
const send = (message: FromExportThread): void => port.postMessage(message);

/** The SDK's OTLP/HTTP exporter, as OTLPTraceExporter builds it, sending requests this thread encoded. */
function otlpHttpDelegate(): SpanExportDelegate {
  const options = convertLegacyHttpOptions({ url: settings.url, headers: settings.headers, timeoutMillis: settings.exportTimeoutMillis }, 'TRACES', 'v1/traces', {
    'Content-Type': 'application/x-protobuf',
  });
  const delegate = createOtlpHttpExportDelegate<EncodedExport, unknown>(
    options,
    { serializeRequest: (batch) => batch.request, deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  );
  return {
    export: (batch, done) => delegate.export(batch, (result) => done(result.code === ExportResultCode.SUCCESS)),
    forceFlush: () => delegate.forceFlush(),
    shutdown: () => delegate.shutdown(),
  };
}

const dropped = (count: number): void => send({ kind: 'dropped', count });
const queue = new SpanQueue(settings, exportEnvelope(settings.serviceName, 'tollgate'), otlpHttpDelegate(), dropped);
const writer = new ProtobufWriter(64 * 1024);
const encoder = new OtlpSpanEncoder(writer, settings.timeOrigin);

port.on('message', (message: ToExportThread) => {
  if (message.kind === 'records') {
    const { requests, lost } = encoder.writeShipment(message);
    if (lost > 0) dropped(lost);
    queue.add(requests);
    let count = 0;
    for (const spans of message.spans) count += spans;
    Atomics.sub(spansInFlight, 0, count);
    return;
  }
  const done = (): void => send({ kind: 'done', id: message.id });
  if (message.kind === 'flush') void queue.flush().then(done, done);
  else void queue.shutdown().then(done, done);
});

lowerPriority();
send({ kind: 'ready' });
