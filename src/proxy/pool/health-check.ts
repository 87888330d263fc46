import http from 'node:http';
import https from 'node:https';
import type { UpstreamConfig } from '../../config/index.js';
import type { TargetPool } from './pool.js';
import type { PoolTarget } from './targets.js';

type HealthCheck = NonNullable<UpstreamConfig['healthCheck']>;

/** One GET of the health path on its target's own keep-alive agent: true for a 2xx within timeoutMs. */
function probe(target: PoolTarget, check: HealthCheck): Promise<boolean> {
  const url = new URL(check.path, target.url);
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: target.options.agent, timeout: check.timeoutMs }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * The optional active health check (SPEC 19): every intervalMs each target's `path` is asked;
 * a failed check takes the target out until a check passes again. Returns what stops it.
 */
export function startHealthChecks(pool: TargetPool, check: HealthCheck): () => void {
  const running = new Set<PoolTarget>();
  const round = () => {
    for (const target of pool.targets) {
      if (running.has(target)) continue;
      running.add(target);
      void probe(target, check).then((healthy) => {
        running.delete(target);
        if (stopped) return;
        if (healthy) pool.checkPassed(target);
        else pool.checkFailed(target, Date.now());
      });
    }
  };
  let stopped = false;
  const timer = setInterval(round, check.intervalMs);
  // A health check never keeps the process up.
  timer.unref();
  round();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
