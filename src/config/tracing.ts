import { z } from 'zod';
import { upstreamReference } from './upstreams.js';

/** The OTel SDK's sampler names (OTEL_TRACES_SAMPLER); `parentbased_*` keep a sampled caller's trace. */
export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

const positiveInt = z.number().int().positive();

/**
 * `tracing:` (SPEC 18). Off by default; the endpoint is the OTLP/HTTP base (`/v1/traces` and
 * `/v1/metrics` are appended). Keys beyond the SPEC's tune the export, which never waits on a request.
 */
export const tracingSchema = z
  .object({
    enabled: z.boolean().default(false),
    endpoint: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).default('http://127.0.0.1:4318'),
    /** Sent with every export (an API key for a hosted collector); OTEL_EXPORTER_OTLP_HEADERS fills it. */
    headers: z.record(z.string().min(1), z.string()).default({}),
    serviceName: z.string().min(1).default('tollgate'),
    sampler: z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).default('parentbased_traceidratio'),
    sampleRatio: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').default(1),
    captureContent: z.boolean().default(false),
    metrics: z.boolean().default(false),
    /** gen_ai.provider.name per upstream, built-in or named (one not listed: its config name; a name no upstream has is refused). */
    providerNames: z.record(upstreamReference, z.string().min(1)).default({}),
    /**
     * Spans waiting for export at most; past it spans are dropped (and counted), never held. Four
     * times the SDK's 2048: at a gateway's rate (~16,000 spans/s at 2,700 chat requests/s) the SDK's
     * queue holds ~130 ms, so any pause of the collector longer than that would drop spans.
     */
    maxQueueSize: positiveInt.default(8192),
    /**
     * Spans an export carries at most; unset, 2048 (or maxQueueSize when smaller):
     * four times the SDK's 512, since an export costs the event loop about the same whatever its size.
     */
    maxExportBatchSize: positiveInt.optional(),
    /** How often a batch leaves; a full batch leaves at once. */
    scheduledDelayMs: positiveInt.default(1000),
    /** An export that takes longer is given up (its spans counted as dropped). */
    exportTimeoutMs: positiveInt.default(10_000),
    metricsIntervalMs: positiveInt.default(15_000),
  })
  .strict()
  .superRefine((tracing, ctx) => {
    // The SDK's BatchSpanProcessor would quietly lower it; a gateway refuses it where it was written.
    if (tracing.maxExportBatchSize !== undefined && tracing.maxExportBatchSize > tracing.maxQueueSize) {
      ctx.addIssue({ code: 'custom', path: ['maxExportBatchSize'], message: `must be at most maxQueueSize (${tracing.maxQueueSize})` });
    }
  })
  .prefault({});
export type TracingConfig = z.infer<typeof tracingSchema>;

type Env = Record<string, string | undefined>;

/** `k1=v1,k2=v2` (values percent-encoded), as OTEL_EXPORTER_OTLP_HEADERS writes headers. */
export function parseOtelHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** The batch span processor's variables (the SDK's BatchSpanProcessor reads them) and the keys they fill. */
const BSP_VARIABLES = {
  OTEL_BSP_SCHEDULE_DELAY: 'scheduledDelayMs',
  OTEL_BSP_EXPORT_TIMEOUT: 'exportTimeoutMs',
  OTEL_BSP_MAX_QUEUE_SIZE: 'maxQueueSize',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'maxExportBatchSize',
} as const;

/** A number from the environment; text that is not one is passed on as it is, for the schema to refuse under its key. */
const numberOrText = (text: string): number | string => {
  const value = Number(text);
  return text.trim() !== '' && Number.isFinite(value) ? value : text;
};

/**
 * The standard OTEL_* variables, for what the file leaves unset (a value in the file wins, as
 * the SDK's own configuration wins over its environment); OTEL_SDK_DISABLED=true turns tracing off.
 */
export function applyOtelEnv(tracing: Record<string, unknown>, env: Env): void {
  const unset = (key: string): boolean => tracing[key] === undefined;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT && unset('endpoint')) tracing.endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_HEADERS && unset('headers')) tracing.headers = parseOtelHeaders(env.OTEL_EXPORTER_OTLP_HEADERS);
  if (env.OTEL_SERVICE_NAME && unset('serviceName')) tracing.serviceName = env.OTEL_SERVICE_NAME;
  if (env.OTEL_TRACES_SAMPLER && unset('sampler')) tracing.sampler = env.OTEL_TRACES_SAMPLER;
  if (env.OTEL_TRACES_SAMPLER_ARG && unset('sampleRatio')) tracing.sampleRatio = numberOrText(env.OTEL_TRACES_SAMPLER_ARG);
  for (const [variable, key] of Object.entries(BSP_VARIABLES)) {
    const value = env[variable];
    if (value && unset(key)) tracing[key] = numberOrText(value);
  }
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') tracing.enabled = false;
}
