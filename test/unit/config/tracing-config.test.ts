import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, parseOtelHeaders } from '../../../src/config/index.js';
import { batchSettings } from '../../../src/tracing/index.js';

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';

describe('tracing config (SPEC 18)', () => {
  it('is off by default, with the SPEC defaults', () => {
    expect(parseConfig(minimal, {}).tracing).toEqual({
      enabled: false,
      endpoint: 'http://127.0.0.1:4318',
      headers: {},
      serviceName: 'tollgate',
      sampler: 'parentbased_traceidratio',
      sampleRatio: 1,
      captureContent: false,
      metrics: false,
      providerNames: {},
      maxQueueSize: 8192,
      scheduledDelayMs: 1000,
      exportTimeoutMs: 10_000,
      metricsIntervalMs: 15_000,
    });
  });

  it.each([
    ['tracing: {sampleRatio: 1.5}', 'config: tracing.sampleRatio: must be between 0 and 1'],
    ['tracing: {endpoint: "collector:4318"}', 'config: tracing.endpoint: must be an http:// or https:// URL'],
    ['tracing: {enabled: "yes"}', 'config: tracing.enabled: Invalid input: expected boolean, received string'],
    ['tracing: {sampler: sometimes}', 'config: tracing.sampler: must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio'],
    ['tracing: {captureContnet: true}', 'config: tracing: unknown key(s) "captureContnet"'],
    ['tracing: {providerNames: {training: openai}}', 'config: tracing.providerNames.training: unknown upstream "training" (configured: service, inference)'],
    ['tracing: {providerNames: {service: ""}}', 'config: tracing.providerNames.service: Too small: expected string to have >=1 characters'],
    ['tracing: {maxExportBatchSize: 16384}', 'config: tracing.maxExportBatchSize: must be at most maxQueueSize (8192)'],
    ['tracing: {maxQueueSize: 100, maxExportBatchSize: 101}', 'config: tracing.maxExportBatchSize: must be at most maxQueueSize (100)'],
    ['tracing: {maxExportBatchSize: 0}', 'config: tracing.maxExportBatchSize: Too small: expected number to be >0'],
  ])('refuses %s naming the key path', (yaml, message) => {
    expect(() => parseConfig(`${minimal}${yaml}\n`, {})).toThrow(new ConfigError(message));
  });

  it('takes the standard OTEL_* variables for what the file leaves unset', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%3Dt, x-tenant = ops',
      OTEL_SERVICE_NAME: 'tollgate-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    };
    const { tracing } = parseConfig(`${minimal}tracing: {enabled: true}\n`, env);
    expect(tracing).toMatchObject({
      enabled: true,
      endpoint: 'https://otlp.example.com:4318',
      headers: { 'x-api-key': 's3cr=t', 'x-tenant': 'ops' },
      serviceName: 'tollgate-eu',
      sampler: 'parentbased_traceidratio',
      sampleRatio: 0.25,
    });
  });

  it('lets the file win over OTEL_*, and OTEL_SDK_DISABLED=true turn tracing off', () => {
    const yaml = `${minimal}tracing: {enabled: true, endpoint: "http://tempo:4318", serviceName: gw}\n`;
    expect(parseConfig(yaml, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318', OTEL_SERVICE_NAME: 'x' }).tracing).toMatchObject({ endpoint: 'http://tempo:4318', serviceName: 'gw', enabled: true });
    expect(parseConfig(yaml, { OTEL_SDK_DISABLED: 'true' }).tracing.enabled).toBe(false);
  });

  it('refuses a bad OTEL_TRACES_SAMPLER_ARG at start-up under the key it fills', () => {
    expect(() => parseConfig(minimal, { OTEL_TRACES_SAMPLER_ARG: 'half' })).toThrow(new ConfigError('config: tracing.sampleRatio: Invalid input: expected number, received string'));
  });

  it('takes the batch span processor variables (OTEL_BSP_*) for what the file leaves unset', () => {
    const env = { OTEL_BSP_SCHEDULE_DELAY: '250', OTEL_BSP_EXPORT_TIMEOUT: '3000', OTEL_BSP_MAX_QUEUE_SIZE: '2048', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' };
    expect(parseConfig(minimal, env).tracing).toMatchObject({ scheduledDelayMs: 250, exportTimeoutMs: 3000, maxQueueSize: 2048, maxExportBatchSize: 512 });
    const yaml = `${minimal}tracing: {scheduledDelayMs: 100, maxQueueSize: 4096}\n`;
    expect(parseConfig(yaml, env).tracing).toMatchObject({ scheduledDelayMs: 100, exportTimeoutMs: 3000, maxQueueSize: 4096, maxExportBatchSize: 512 });
  });

  it.each([
    [{ OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }, 'config: tracing.maxQueueSize: Invalid input: expected number, received string'],
    [{ OTEL_BSP_SCHEDULE_DELAY: ' ' }, 'config: tracing.scheduledDelayMs: Invalid input: expected number, received string'],
    [{ OTEL_BSP_EXPORT_TIMEOUT: '2.5' }, 'config: tracing.exportTimeoutMs: Invalid input: expected int, received number'],
    [{ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '16384' }, 'config: tracing.maxExportBatchSize: must be at most maxQueueSize (8192)'],
  ])('refuses a bad OTEL_BSP_* value at start-up under the key it fills: %j', (env, message) => {
    expect(() => parseConfig(minimal, env)).toThrow(new ConfigError(message));
  });

  it('exports 2048 spans at most when maxExportBatchSize is unset, or the whole queue when it is smaller', () => {
    const settings = (yaml: string) => batchSettings(parseConfig(`${minimal}${yaml}\n`, {}).tracing, { spansDropped: () => undefined });
    expect(settings('tracing: {enabled: true}')).toMatchObject({ maxQueueSize: 8192, maxExportBatchSize: 2048 });
    expect(settings('tracing: {maxQueueSize: 1000}')).toMatchObject({ maxQueueSize: 1000, maxExportBatchSize: 1000 });
    expect(settings('tracing: {maxExportBatchSize: 100}')).toMatchObject({ maxQueueSize: 8192, maxExportBatchSize: 100 });
  });

  it('reads OTEL_EXPORTER_OTLP_HEADERS pairs, skipping malformed ones', () => {
    expect(parseOtelHeaders('a=1,broken,=x,b=two%20words')).toEqual({ a: '1', b: 'two words' });
  });
});
