import type { Attributes, Histogram } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import type { Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { TracingConfig } from '../config/index.js';

/** Bucket boundaries the GenAI semantic conventions advise for each histogram. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];

/** One chat exchange as the GenAI metrics see it. */
export interface GenAiMeasurement {
  /** gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, error.type. */
  readonly attributes: Attributes;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly durationSeconds: number;
  /** Streams only: when the first chunk came, from when the request left. */
  readonly firstChunkSeconds: number | undefined;
}

/** `gen_ai.client.token.usage`, `gen_ai.server.request.duration`, `gen_ai.server.time_to_first_token` over OTLP (SPEC 18). */
export interface GenAiMetrics {
  record(measurement: GenAiMeasurement): void;
  close(deadline: number): Promise<void>;
}

export function createGenAiMetrics(config: TracingConfig, resource: Resource, url: string): GenAiMetrics {
  const exporter = new OTLPMetricExporter({ url, headers: config.headers, timeoutMillis: config.exportTimeoutMs });
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: config.metricsIntervalMs,
    exportTimeoutMillis: Math.min(config.exportTimeoutMs, config.metricsIntervalMs),
  });
  const provider = new MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter('tollgate');
  const histogram = (name: string, unit: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: buckets } });
  const tokens = histogram('gen_ai.client.token.usage', '{token}', 'Tokens used per chat request, by gen_ai.token.type (input, output).', TOKEN_BUCKETS);
  const duration = histogram('gen_ai.server.request.duration', 's', 'Chat request duration, from arrival to the last byte.', DURATION_BUCKETS);
  const firstToken = histogram('gen_ai.server.time_to_first_token', 's', 'Time to the first chunk of a streamed chat completion.', FIRST_TOKEN_BUCKETS);
  return {
    record(m) {
      if (m.inputTokens !== undefined) tokens.record(m.inputTokens, { ...m.attributes, 'gen_ai.token.type': 'input' });
      if (m.outputTokens !== undefined) tokens.record(m.outputTokens, { ...m.attributes, 'gen_ai.token.type': 'output' });
      duration.record(m.durationSeconds, m.attributes);
      if (m.firstChunkSeconds !== undefined) firstToken.record(m.firstChunkSeconds, m.attributes);
    },
    async close(deadline) {
      const ms = Math.max(0, deadline - Date.now());
      await provider.shutdown({ timeoutMillis: ms }).catch(() => undefined);
    },
  };
}
