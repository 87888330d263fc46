/**
 * The SDK's own work for one traced chat request, in isolation: making its six spans through the
 * gateway's RequestTrace (the SDK's tracer, sampler and spans; a processor that only keeps them),
 * then encoding them with the SDK's OTLP serializers, 2048 spans a batch as the gateway exports.
 * This is the floor tracing costs at ratio 1.0 with the SDK, before queueing, garbage collection
 * and the export's HTTP: `npm run bench:tracing-loop` prints it after the loop's table.
 */
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Tracing } from '../src/tracing/index.js';

/** Spans a chat request makes: SERVER, auth, validate, ownership, limits, the CLIENT hop. */
const SPANS_A_REQUEST = 6;
const BATCH = 2048;

type OneRequest = (tracing: Tracing) => void;

/** CPU µs of `work` a request (it handles `requests`), the median of 5 rounds after one to warm up. */
function perRequest(work: () => void, requests: number): number {
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    const before = process.cpuUsage();
    work();
    const used = process.cpuUsage(before);
    if (round > 0) rounds.push((used.user + used.system) / requests);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

export function tracingFloor(oneRequest: OneRequest): string {
  const kept: ReadableSpan[] = [];
  const keep: SpanProcessor = { onStart: () => undefined, onEnd: (span) => void kept.push(span), forceFlush: async () => undefined, shutdown: async () => undefined };
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'tollgate' }), sampler: new AlwaysOnSampler(), spanProcessors: [keep] });
  const tracing = new Tracing(provider, new W3CTraceContextPropagator(), { captureContent: false, providerNames: {}, metrics: undefined });
  const requests = 20 * (BATCH / SPANS_A_REQUEST);
  const making = perRequest(() => {
    for (let i = 0; i < requests; i++) {
      oneRequest(tracing);
      if (kept.length >= BATCH) kept.length = 0;
    }
  }, requests);
  kept.length = 0;
  while (kept.length < BATCH) oneRequest(tracing);
  const batch = kept.slice(0, BATCH);
  const requestsInBatch = BATCH / SPANS_A_REQUEST;
  const serialize = (serializer: typeof ProtobufTraceSerializer): number =>
    perRequest(() => {
      for (let i = 0; i < 10; i++) serializer.serializeRequest(batch);
    }, 10 * requestsInBatch);
  const protobuf = serialize(ProtobufTraceSerializer);
  const json = serialize(JsonTraceSerializer);
  const bytes = (serializer: typeof ProtobufTraceSerializer): string => (serializer.serializeRequest(batch)!.length / requestsInBatch).toFixed(0);
  return [
    `The SDK's own work a traced request (${SPANS_A_REQUEST} spans), in isolation: CPU µs, median of 5 rounds`,
    '| work | CPU µs a request | bytes a request |',
    '|---|--:|--:|',
    `| making the spans (RequestTrace on the SDK's tracer) | ${making.toFixed(1)} | |`,
    `| the SDK's OTLP protobuf serializer (${BATCH} a batch) | ${protobuf.toFixed(1)} | ${bytes(ProtobufTraceSerializer)} |`,
    `| the SDK's OTLP JSON serializer (${BATCH} a batch) | ${json.toFixed(1)} | ${bytes(JsonTraceSerializer)} |`,
  ].join('\n');
}
