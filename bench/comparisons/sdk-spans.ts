import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type SpanContext } from '@opentelemetry/api';
import { addHrTimes, hrTimeDuration, millisToHrTime, TraceState } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { RequestRecord, StepFacts } from '../../src/tracing/export-messages.js';

/**
 * A request record's spans as the SDK's ReadableSpans, made the way the export thread made them
 * before it wrote OTLP bytes itself (steps, CLIENT, SERVER; times from the record's offsets): the
 * reference the encoder is held against, byte for byte through the SDK's serializer
 * (test/unit/tracing/otlp-spans.test.ts), and the former path span-encoding.ts times.
 */
export interface SdkSpanSettings {
  /** The request thread's performance.timeOrigin, as the SDK's hrtime. */
  readonly origin: HrTime;
  readonly resource: Resource;
  readonly instrumentationScope: { readonly name: string };
  /** The steps' span ids (the SDK's generator, or a test's counter). */
  readonly stepSpanId: () => string;
}

export function readableSpansOf(record: RequestRecord, settings: SdkSpanSettings, into: ReadableSpan[]): void {
  const { resource, instrumentationScope } = settings;
  const traceState = record.parent?.traceState === undefined ? undefined : new TraceState(record.parent.traceState);
  const contextOf = (spanId: string): SpanContext => ({ traceId: record.traceId, spanId, traceFlags: TraceFlags.SAMPLED, traceState });
  const server = contextOf(record.server.id);
  // The caller's flags are not in the record: the SDK writes a span's own flags, never its parent's.
  const remote = record.parent && { traceId: record.traceId, spanId: record.parent.spanId, traceFlags: TraceFlags.SAMPLED, traceState, isRemote: true };
  const start = addHrTimes(settings.origin, millisToHrTime(record.start));
  const timeOf = (micros: number): HrTime => addHrTimes(start, millisToHrTime(micros / 1000));
  const span = (facts: StepFacts, kind: SpanKind, context: SpanContext, parentSpanContext: SpanContext | undefined): ReadableSpan => {
    const startTime = timeOf(facts.start);
    const endTime = timeOf(facts.end);
    return {
      name: facts.name,
      kind,
      spanContext: () => context,
      parentSpanContext,
      startTime,
      endTime,
      status: facts.error === undefined ? { code: SpanStatusCode.UNSET } : facts.error === '' ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: facts.error },
      attributes: facts.attributes,
      links: [],
      events: [],
      duration: hrTimeDuration(startTime, endTime),
      ended: true,
      resource,
      instrumentationScope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  };
  for (const step of record.steps) into.push(span(step, SpanKind.INTERNAL, contextOf(settings.stepSpanId()), server));
  if (record.client) into.push(span(record.client, SpanKind.CLIENT, contextOf(record.client.id), server));
  into.push(span(record.server, SpanKind.SERVER, server, remote));
}
