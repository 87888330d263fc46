import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from './metrics.js';

/** Serves the exposition; with a bearer token configured, only to scrapers that present it. */
export function createMetricsEndpoint(metrics: Metrics, bearerToken: string | null): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = bearerToken === null ? null : Buffer.from(`Bearer ${bearerToken}`);
  const authorized = (header: string | undefined): boolean => {
    if (expected === null) return true;
    if (header === undefined) return false;
    const presented = Buffer.from(header);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  };
  return (req, res) => {
    if (!authorized(req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' });
      res.end('metrics require the configured bearer token\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      () => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('metrics rendering failed\n');
      },
    );
  };
}
