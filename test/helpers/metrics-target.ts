import { createServer } from 'node:http';
import type { Metrics } from '../../src/observability/index.js';
import { freePort } from './ports.js';

export interface MetricsTarget {
  /** host:port, as Prometheus targets want it. */
  readonly target: string;
  close(): Promise<void>;
}

/** Serves `metrics.render()` at /metrics on a free loopback port (a stand-in for the gateway). */
export async function serveMetrics(metrics: Metrics): Promise<MetricsTarget> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    target: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Records at least one observation on every `tollgate_*` metric, with the label values a
 * dashboard panel filters on (e.g. 4xx/5xx statuses), so every panel query has data.
 */
export function recordSampleTraffic(metrics: Metrics): void {
  const chat = metrics.forRoute({ route: '/v1/chat/completions', method: 'POST', upstream: 'service' });
  for (const status of [200, 429, 502]) chat.requests(status).inc();
  metrics.forRoute({ route: '/v1/models', method: 'GET', upstream: 'inference' }).requests(200).inc();
  chat.duration.observe(1.5);
  chat.ttfb.observe(0.4);
  chat.overhead.observe(0.00012);
  metrics.recordTokens('team-a', 'prod', 'llama-3', { prompt_tokens: 120, completion_tokens: 30 });
  metrics.recordCost('team-a', 'prod', 'llama-3', 12_600);
  metrics.recordRejection('key', 'rpm');
  metrics.recordAuthFailure('invalid_key');
  chat.validationFailures.inc();
  chat.started();
  metrics.recordUpstreamError('service', 'connect');
  metrics.recordUpstreamTarget('inference', '10.0.0.5:9001');
  metrics.recordUpstreamEjection('inference', '10.0.0.5:9001');
  metrics.recordUpstreamRetry('inference', 'connect');
  metrics.watchUpstreamTargets(() => [{ upstream: 'inference', target: '10.0.0.5:9001', up: false }]);
  metrics.recordStoreError('redis');
  metrics.recordDatabaseError();
  metrics.recordUsageRowDropped();
  metrics.recordConfigReload('ok');
  metrics.recordOwnershipDenial('training_job');
  metrics.recordModelDenial('team');
  metrics.recordModelFallback('openai/gpt-5', 'OpenPipe/Qwen3-14B-Instruct', '503');
  metrics.recordOwnershipUnrecorded('run');
  metrics.recordTrainingJob('team-a', 'prod', 'sft');
  metrics.watchConnections({ open: 3, maxConnections: 448 });
  metrics.recordConnectionEvicted('pressure_headers');
  metrics.recordConnectionRefused();
}
