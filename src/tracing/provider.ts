import { createNoopMeter, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type BufferConfig,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SamplerName, TracingConfig } from '../config/index.js';
import { createGenAiMetrics, type GenAiMetrics } from './genai-metrics.js';
import { Tracing } from './tracing.js';

/** What the tracer reports to the rest of the gateway. */
export interface TracingEvents {
  /** Spans given up: the export queue was full, or an export failed or timed out. */
  spansDropped(count: number): void;
}

/**
 * The OTel sampler a `tracing.sampler` name stands for, with `sampleRatio` where it takes one. A
 * ratio of 1 keeps every trace: always on says so without hashing each trace id (the same
 * decisions, less work per span).
 */
export function samplerFor(name: SamplerName, ratio: number): Sampler {
  const keepsAll = name.endsWith('always_on') || (name.endsWith('traceidratio') && ratio >= 1);
  const root = keepsAll ? new AlwaysOnSampler() : name.endsWith('always_off') ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** The SDK counts each span it processed; a span with an `error.type` (queue_full, an export error) was dropped. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/**
 * A MeterProvider for the span processor's own metrics (the SDK's self-observability): of all
 * it reports, only dropped spans matter here, and they go to the Prometheus counter. Everything
 * else is the API's no-op meter.
 */
function droppedSpansMeter(events: TracingEvents): MeterProvider {
  const noop = createNoopMeter();
  const dropped: Pick<Counter, 'add'> = {
    add: (count, attributes) => {
      if (attributes?.['error.type'] !== undefined) events.spansDropped(count);
    },
  };
  const meter = Object.create(noop) as Meter;
  meter.createCounter = ((name: string, options) => (name === PROCESSED_SPANS ? dropped : noop.createCounter(name, options))) as Meter['createCounter'];
  return { getMeter: () => meter };
}

/** The batch processor's settings: a bounded queue, and exports given up past the timeout. */
function bufferConfig(config: TracingConfig, events: TracingEvents): BufferConfig {
  const options: BufferConfig & { selfObsMeterProvider: MeterProvider } = {
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: Math.min(512, config.maxQueueSize),
    scheduledDelayMillis: config.scheduledDelayMs,
    exportTimeoutMillis: config.exportTimeoutMs,
    selfObsMeterProvider: droppedSpansMeter(events),
  };
  return options;
}

const withPath = (endpoint: string, path: string): string => `${endpoint.replace(/\/+$/, '')}${path}`;

/**
 * Builds the tracer (and, with `metrics: true`, the GenAI metrics) from `tracing:`; undefined
 * when tracing is off, so the request path checks one field and builds nothing.
 */
export function createTracing(config: TracingConfig, events: TracingEvents): Tracing | undefined {
  if (!config.enabled) return undefined;
  const resource: Resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName });
  const exporter = new OTLPTraceExporter({ url: withPath(config.endpoint, '/v1/traces'), headers: config.headers, timeoutMillis: config.exportTimeoutMs });
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerFor(config.sampler, config.sampleRatio),
    spanProcessors: [new BatchSpanProcessor(exporter, bufferConfig(config, events))],
  });
  const metrics: GenAiMetrics | undefined = config.metrics ? createGenAiMetrics(config, resource, withPath(config.endpoint, '/v1/metrics')) : undefined;
  return new Tracing(provider, new W3CTraceContextPropagator(), {
    captureContent: config.captureContent,
    providerNames: config.providerNames,
    metrics,
  });
}
