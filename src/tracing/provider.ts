import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SamplerName, TracingConfig } from '../config/index.js';
import type { ExportThreadSettings } from './export-messages.js';
import { ExportThread } from './export-thread.js';
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
 * Spans an export carries when `maxExportBatchSize` is unset: four times the SDK's 512. An export
 * costs the export thread ~0.6 ms of CPU whatever its size (Node's HTTP client, the SDK's transport),
 * which at 512 spans was a third of its work a request (docs/tracing.md, "Cost").
 */
const DEFAULT_EXPORT_BATCH_SIZE = 2048;

const withPath = (endpoint: string, path: string): string => `${endpoint.replace(/\/+$/, '')}${path}`;

/** The export thread's settings: the batch processor's bounded queue, and exports given up past the timeout. */
export function exportSettings(config: TracingConfig): ExportThreadSettings {
  return {
    url: withPath(config.endpoint, '/v1/traces'),
    headers: config.headers,
    serviceName: config.serviceName,
    timeOrigin: performance.timeOrigin,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize ?? Math.min(DEFAULT_EXPORT_BATCH_SIZE, config.maxQueueSize),
    scheduledDelayMillis: config.scheduledDelayMs,
    exportTimeoutMillis: config.exportTimeoutMs,
  };
}

/**
 * Builds the tracer (and, with `metrics: true`, the GenAI metrics) from `tracing:`; undefined
 * when tracing is off, so the request path checks one field and builds nothing.
 */
export function createTracing(config: TracingConfig, events: TracingEvents): Tracing | undefined {
  if (!config.enabled) return undefined;
  const resource: Resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName });
  const exportThread = new ExportThread(exportSettings(config), events);
  const metrics: GenAiMetrics | undefined = config.metrics ? createGenAiMetrics(config, resource, withPath(config.endpoint, '/v1/metrics')) : undefined;
  return new Tracing(exportThread, new W3CTraceContextPropagator(), samplerFor(config.sampler, config.sampleRatio), {
    captureContent: config.captureContent,
    providerNames: config.providerNames,
    metrics,
  });
}
