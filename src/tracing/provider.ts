import type { MeterProvider } from '@opentelemetry/api';
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
import { droppedSpansMeter } from './dropped-spans.js';
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

/**
 * Spans an export carries when `maxExportBatchSize` is unset: four times the SDK's 512. Each
 * export costs the event loop about the same fixed work (an HTTP request, its response) whatever
 * its size, so fewer, larger exports take less from requests (docs/decisions.md).
 */
const DEFAULT_EXPORT_BATCH_SIZE = 2048;

/** The batch processor's settings: a bounded queue, exports given up past the timeout, and its drops counted. */
export function batchSettings(config: TracingConfig, events: TracingEvents): BufferConfig & { selfObsMeterProvider: MeterProvider } {
  return {
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize ?? Math.min(DEFAULT_EXPORT_BATCH_SIZE, config.maxQueueSize),
    scheduledDelayMillis: config.scheduledDelayMs,
    exportTimeoutMillis: config.exportTimeoutMs,
    selfObsMeterProvider: droppedSpansMeter((count) => events.spansDropped(count)),
  };
}

const withPath = (endpoint: string, path: string): string => `${endpoint.replace(/\/+$/, '')}${path}`;

/**
 * The OTLP/HTTP exporter, with at most one queue's worth of exports in flight. The SDK's
 * BatchSpanProcessor (2.12) means to run one export at a time, but after a failed export its
 * `.catch` clears the "exporting" flag the `.finally` before it had set for the next export: with
 * a collector down (each export retried for seconds) exports pile up to the exporter's default
 * limit of 30, each holding its batch — RSS doubled in a 100,000-request soak. Past this limit an
 * export fails at once and the processor counts its spans as dropped.
 */
export function otlpExporter(config: TracingConfig, batch: BufferConfig): OTLPTraceExporter {
  const concurrencyLimit = Math.ceil(batch.maxQueueSize! / batch.maxExportBatchSize!);
  return new OTLPTraceExporter({ url: withPath(config.endpoint, '/v1/traces'), headers: config.headers, timeoutMillis: config.exportTimeoutMs, concurrencyLimit });
}

/**
 * Builds the tracer (and, with `metrics: true`, the GenAI metrics) from `tracing:`; undefined
 * when tracing is off, so the request path checks one field and builds nothing.
 */
export function createTracing(config: TracingConfig, events: TracingEvents): Tracing | undefined {
  if (!config.enabled) return undefined;
  const resource: Resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName });
  const batch = batchSettings(config, events);
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerFor(config.sampler, config.sampleRatio),
    spanProcessors: [new BatchSpanProcessor(otlpExporter(config, batch), batch)],
  });
  const metrics: GenAiMetrics | undefined = config.metrics ? createGenAiMetrics(config, resource, withPath(config.endpoint, '/v1/metrics')) : undefined;
  return new Tracing(provider, new W3CTraceContextPropagator(), {
    captureContent: config.captureContent,
    providerNames: config.providerNames,
    metrics,
  });
}
