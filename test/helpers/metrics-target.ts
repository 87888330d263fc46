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
  const chat = { route: '/v1/chat/completions', method: 'POST', upstream: 'service' };
  for (const status of [200, 429, 502]) metrics.requests.inc({ ...chat, status });
  metrics.requests.inc({ route: '/v1/models', method: 'GET', status: 200, upstream: 'inference' });
  metrics.requestDuration.observe(chat, 1.5);
  metrics.upstreamTtfb.observe({ route: chat.route, upstream: 'service' }, 0.4);
  metrics.overhead.observe({ route: chat.route }, 0.00012);
  metrics.tokens.inc({ team: 'team-a', project: 'prod', model: 'llama-3', type: 'prompt' }, 120);
  metrics.tokens.inc({ team: 'team-a', project: 'prod', model: 'llama-3', type: 'completion' }, 30);
  metrics.rateLimitRejections.inc({ scope: 'key', limit: 'rpm' });
  metrics.authFailures.inc({ reason: 'invalid_key' });
  metrics.validationFailures.inc({ route: chat.route });
  metrics.inflight.inc({ route: chat.route });
  metrics.upstreamErrors.inc({ upstream: 'service', kind: 'connect' });
  metrics.storeErrors.inc({ store: 'redis' });
  metrics.trainingJobsCreated.inc({ team: 'team-a', project: 'prod', kind: 'sft' });
}
