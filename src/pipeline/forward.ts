import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Metrics } from '../observability/index.js';
import { forwardableHeaders, relayResponse, type Upstream, type UpstreamName } from '../proxy/index.js';
import type { PreparedBody } from './body.js';
import type { Exchange, UpstreamLeg } from './exchange.js';

/** The handle of a request whose forward() has not returned yet: nothing to abort. */
const NOT_SENT = { abort: () => undefined };

export interface ForwardDeps {
  readonly metrics: Metrics;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
  /** Client forwarding headers dropped before the gateway sets its own (none behind a trusted proxy). */
  readonly untrustedHeaders: ReadonlySet<string>;
  /** Answers a request that failed after it left (upstream refused, timed out, upload too large). */
  fail(exchange: Exchange, err: unknown): void;
}

/**
 * Sends an admitted request upstream and relays the response through the body's tap;
 * `ownHeaders` (request id, rate-limit headers) go out with whatever the upstream answers.
 */
export function forwardExchange(req: IncomingMessage, exchange: Exchange, body: PreparedBody, ownHeaders: OutgoingHttpHeaders, deps: ForwardDeps): void {
  const { route, res } = exchange;
  const upstream = deps.upstreams[route.upstream];
  // http-proxy-3 sends req.headers (adding X-Forwarded-* after the client's trusted ones).
  req.headers = forwardableHeaders(req.headers, deps.untrustedHeaders);
  req.headers['x-request-id'] = exchange.id;
  const stream = body.open((err) => {
    exchange.leg?.handle.abort();
    deps.fail(exchange, err);
  });
  const sentAt = performance.now();
  exchange.metrics.overhead.observe((sentAt - exchange.startedAt) / 1000);
  const leg: UpstreamLeg = { sentAt, handle: NOT_SENT, completed: false };
  exchange.leg = leg;
  leg.handle = upstream.forward(req, res, stream, {
    onResponse(upstreamResponse) {
      leg.respondedAt = performance.now();
      leg.upstreamStatus = upstreamResponse.statusCode;
      exchange.metrics.ttfb.observe((leg.respondedAt - sentAt) / 1000);
      relay(upstreamResponse, exchange, leg, body, ownHeaders, upstream.idleTimeoutMs, deps);
    },
    onFailure(kind, error) {
      deps.metrics.recordUpstreamError(route.upstream, kind);
      deps.fail(exchange, error);
    },
  });
}

function relay(
  upstreamResponse: IncomingMessage,
  exchange: Exchange,
  leg: UpstreamLeg,
  body: PreparedBody,
  ownHeaders: OutgoingHttpHeaders,
  idleTimeoutMs: number,
  deps: ForwardDeps,
): void {
  const tap = upstreamResponse.statusCode === 200 ? body.tap(upstreamResponse) : undefined;
  relayResponse(upstreamResponse, exchange.res, ownHeaders, tap, idleTimeoutMs, ({ completed, stalled, tapResult }) => {
    leg.completed = completed;
    leg.seen = tapResult;
    if (stalled) {
      deps.metrics.recordUpstreamError(exchange.route.upstream, 'idle');
      exchange.errorCode = 'upstream_idle';
    }
  });
}
