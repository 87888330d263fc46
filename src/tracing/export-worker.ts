import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type Link, type SpanContext } from '@opentelemetry/api';
import { addHrTimes, hrTimeDuration, millisToHrTime, TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, RandomIdGenerator, type ReadableSpan, type TimedEvent } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { droppedSpansMeter } from './dropped-spans.js';
import { spanCount, type ExportThreadSettings, type FromExportThread, type RequestRecord, type StepFacts, type ToExportThread } from './export-messages.js';

/**
 * The export thread: each traced request's spans become the SDK's ReadableSpan (what span
 * processors and exporters read), go through its BatchSpanProcessor (bounded queue, batches,
 * export timeout, drop accounting) and leave by its OTLP/HTTP protobuf exporter. The sampling
 * decision and the ids were the request thread's (its SDK sampler and id generator): only
 * sampled requests come here, and the upstream was already sent the CLIENT span's id.
 *
 * The SDK's own Span class is not used: its job (clock, limits, the processor's onStart and
 * onEnd) is done once the request has ended, and making one per span again here cost a
 * quarter of this thread's work (docs/tracing.md, "Cost").
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
const settings = workerData as ExportThreadSettings;
const send = (message: FromExportThread): void => port.postMessage(message);

const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url, headers: settings.headers, timeoutMillis: settings.exportTimeoutMillis }), {
  maxQueueSize: settings.maxQueueSize,
  maxExportBatchSize: settings.maxExportBatchSize,
  scheduledDelayMillis: settings.scheduledDelayMillis,
  exportTimeoutMillis: settings.exportTimeoutMillis,
  // The SDK's own count of the spans it gave up (queue full, export failed or timed out).
  selfObsMeterProvider: droppedSpansMeter((count) => send({ kind: 'dropped', count })),
} as ConstructorParameters<typeof BatchSpanProcessor>[1]);
const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName });
const instrumentationScope = { name: 'tollgate' };

const origin = millisToHrTime(settings.timeOrigin);
/** A span time: the request's start (ms on the request thread's performance clock) and whole µs after it. */
const timeOf = (requestStart: HrTime, micros: number): HrTime => addHrTimes(requestStart, millisToHrTime(micros / 1000));
const ids = new RandomIdGenerator();
const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];

/** An ended span, as the SDK's span processors and exporters read one. */
function endedSpan(facts: StepFacts, requestStart: HrTime, kind: SpanKind, context: SpanContext, parentSpanContext: SpanContext | undefined): ReadableSpan {
  const startTime = timeOf(requestStart, facts.start);
  const endTime = timeOf(requestStart, facts.end);
  return {
    name: facts.name,
    kind,
    spanContext: () => context,
    parentSpanContext,
    startTime,
    endTime,
    status: facts.error === undefined ? { code: SpanStatusCode.UNSET } : facts.error === '' ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: facts.error },
    attributes: facts.attributes,
    links: NO_LINKS,
    events: NO_EVENTS,
    duration: hrTimeDuration(startTime, endTime),
    ended: true,
    resource,
    instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The request's spans, as the request thread saw them, to the batch processor. */
function replay(record: RequestRecord): void {
  const { traceId, parent } = record;
  const traceState = parent?.traceState === undefined ? undefined : new TraceState(parent.traceState);
  const contextOf = (spanId: string): SpanContext => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, traceState });
  const server = contextOf(record.server.id);
  const remote = parent && { traceId, spanId: parent.spanId, traceFlags: parent.traceFlags, traceState, isRemote: true };
  const start = addHrTimes(origin, millisToHrTime(record.start));
  for (const step of record.steps) processor.onEnd(endedSpan(step, start, SpanKind.INTERNAL, contextOf(ids.generateSpanId()), server));
  if (record.client) processor.onEnd(endedSpan(record.client, start, SpanKind.CLIENT, contextOf(record.client.id), server));
  processor.onEnd(endedSpan(record.server, start, SpanKind.SERVER, server, remote));
}

port.on('message', (message: ToExportThread) => {
  if (typeof message === 'string') {
    const records = JSON.parse(message) as RequestRecord[];
    let count = 0;
    for (const record of records) {
      replay(record);
      count += spanCount(record);
    }
    send({ kind: 'received', count });
    return;
  }
  const done = (): void => send({ kind: 'done', id: message.id });
  if (message.kind === 'flush') void processor.forceFlush().then(done, done);
  else void processor.shutdown().then(done, done);
});

lowerPriority();
send({ kind: 'ready' });
