import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Stream } from 'node:stream';
import { AuthFailure, type Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { asGatewayError, writeError } from '../errors.js';
import type { Limiter } from '../limits/index.js';
import { createResponseTap, forceStreamUsage, type ResponseTap } from '../metering/index.js';
import { requestIdFor } from '../observability/request-id.js';
import { PROJECT_FORBIDDEN, resolveProject } from '../projects/index.js';
import {
  assertDeclaredLength,
  BodyLimitCounter,
  BufferedBody,
  forwardableHeaders,
  readBody,
  relayResponse,
  type RouteSpec,
  type Upstream,
  type UpstreamName,
} from '../proxy/index.js';
import { estimateChatTokens, renderValidationBody, validateChatBody } from '../validation/index.js';
import { completeExchange, type CompletionDeps } from './complete.js';
import { Exchange } from './exchange.js';
import { RouteMetricsCache } from './route-metrics.js';

/** What the pipeline needs beyond what completing an exchange does (metrics, logger, usage store). */
export interface PipelineDeps extends CompletionDeps {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly limiter: Limiter;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
}

/** What the request carries upstream once the gateway has looked at its body. */
interface PreparedBody {
  readonly stream: Stream | undefined;
  readonly tap: (upstreamResponse: IncomingMessage) => ResponseTap | undefined;
}

const NO_BODY: PreparedBody = { stream: undefined, tap: () => undefined };

export interface V1Handler {
  handle(req: IncomingMessage, res: ServerResponse, route: RouteSpec): void;
  /** Resolves once no exchange is open (each completed one has started settling its limits). */
  idle(): Promise<void>;
}

/**
 * Builds the handler for every /v1 route: auth → project → body → limits → upstream → tap →
 * settle. Each step hands the next what it learned through the Exchange; failures go through
 * one renderer.
 */
export function createV1Handler(deps: PipelineDeps): V1Handler {
  const { config, metrics } = deps;
  const projectHeader = config.metering.projectHeader.toLowerCase();
  const limitedKinds = new Set(['chat', 'models', 'preview']);
  /** Behind no trusted proxy, X-Forwarded-* from the client are dropped: the gateway sets its own. */
  const untrustedHeaders: ReadonlySet<string> = new Set(
    config.server.trustProxy ? [] : ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port'],
  );

  const prepareChatBody = async (req: IncomingMessage, res: ServerResponse, exchange: Exchange): Promise<PreparedBody | null> => {
    const raw = await readBody(req, config.server.bodyLimit);
    const validation = validateChatBody(raw, req.headers['content-type']);
    if (!validation.ok) {
      exchange.metrics.validationFailures.inc();
      const body = renderValidationBody(validation.detail);
      res.writeHead(422, { 'x-request-id': exchange.id, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return null;
    }
    exchange.model = validation.body.model;
    exchange.estimatedTokens = estimateChatTokens(validation.body, config.rateLimits.defaultCompletionTokens);
    const { bytes, forced } = config.metering.forceStreamUsage ? forceStreamUsage(raw, validation.body) : { bytes: raw, forced: false };
    // Usage is read from the response body: it must arrive uncompressed to be metered.
    req.headers['accept-encoding'] = 'identity';
    // The parser consumed the client's stream: re-send the original bytes with their exact length
    // (a chunked request's transfer-encoding, hop-by-hop, is dropped in forward()).
    req.headers['content-length'] = String(bytes.length);
    return {
      stream: new BufferedBody(bytes),
      tap: (upstreamResponse) =>
        createResponseTap(upstreamResponse.headers['content-type'], { dropUsageChunk: forced, contentEncoding: upstreamResponse.headers['content-encoding'] }),
    };
  };

  const preparePreviewBody = (req: IncomingMessage, exchange: Exchange): PreparedBody => {
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return NO_BODY;
    // Uploads can be hundreds of MB: stream them through, counting, never buffering.
    const counter = new BodyLimitCounter(config.server.streamBodyLimit);
    counter.once('error', (err) => {
      exchange.upstream?.abort();
      fail(exchange, err);
    });
    req.pipe(counter);
    return { stream: counter, tap: () => undefined };
  };

  const fail = (exchange: Exchange, err: unknown): void => {
    const error = asGatewayError(err);
    if (error.status === 500) deps.logger.error({ requestId: exchange.id, err }, 'unhandled error');
    exchange.errorCode = error.code;
    if (!exchange.res.headersSent) {
      exchange.res.setHeader('x-request-id', exchange.id);
      // Refused before its body was read (an upload answered 401/429/413): close rather than
      // let Node read and discard what may be hundreds of MB still coming.
      if (!exchange.res.req.complete) exchange.res.setHeader('connection', 'close');
      // An admitted request that fails later (502/504/413) still tells the client where its limits stand.
      for (const [name, value] of Object.entries(exchange.admission?.headers ?? {})) exchange.res.setHeader(name, value);
    }
    if (err instanceof AuthFailure) metrics.authFailures.inc({ reason: err.reason });
    else if (error.code === PROJECT_FORBIDDEN) metrics.authFailures.inc({ reason: PROJECT_FORBIDDEN });
    writeError(exchange.res, error);
  };

  const forward = (req: IncomingMessage, exchange: Exchange, body: PreparedBody, ownHeaders: OutgoingHttpHeaders): void => {
    const { route, res } = exchange;
    const upstream = deps.upstreams[route.upstream];
    // http-proxy-3 sends req.headers (adding X-Forwarded-* after the client's trusted ones).
    req.headers = forwardableHeaders(req.headers, untrustedHeaders);
    req.headers['x-request-id'] = exchange.id;
    exchange.sentAt = performance.now();
    const routeMetrics = exchange.metrics;
    routeMetrics.overhead.observe((exchange.sentAt - exchange.startedAt) / 1000);
    exchange.upstream = upstream.forward(req, res, body.stream, {
      onResponse(upstreamResponse) {
        exchange.respondedAt = performance.now();
        routeMetrics.ttfb.observe((exchange.respondedAt - exchange.sentAt!) / 1000);
        const tap = upstreamResponse.statusCode === 200 ? body.tap(upstreamResponse) : undefined;
        relayResponse(upstreamResponse, res, ownHeaders, tap, ({ completed, tapResult }) => {
          exchange.completed = completed;
          if (tapResult) {
            exchange.usage = tapResult.usage;
            exchange.usageModel = tapResult.model ?? undefined;
          }
        });
      },
      onFailure(kind, error) {
        metrics.upstreamErrors.inc({ upstream: route.upstream, kind });
        fail(exchange, error);
      },
    });
  };

  const handle = async (req: IncomingMessage, exchange: Exchange): Promise<void> => {
    const { route, res } = exchange;
    const principal = await deps.authenticator.authenticate(req.headers.authorization);
    exchange.principal = principal;
    const projectValue = req.headers[projectHeader];
    exchange.project = resolveProject(principal, Array.isArray(projectValue) ? projectValue[0] : projectValue, config.metering.projectHeader);

    let body = NO_BODY;
    if (route.kind === 'chat') {
      const chat = await prepareChatBody(req, res, exchange);
      if (!chat) return;
      body = chat;
    } else if (route.kind === 'preview') {
      assertDeclaredLength(req, config.server.streamBodyLimit);
    }

    const ownHeaders: OutgoingHttpHeaders = { 'x-request-id': exchange.id };
    if (limitedKinds.has(route.kind)) {
      const admission = await deps.limiter.admit({ principal, project: exchange.project, estimatedTokens: exchange.estimatedTokens });
      exchange.admission = admission;
      Object.assign(ownHeaders, admission.headers);
    }
    if (route.kind === 'preview') body = preparePreviewBody(req, exchange);
    forward(req, exchange, body, ownHeaders);
  };

  const routeMetrics = new RouteMetricsCache(metrics);
  let open = 0;
  let idleWaiters: Array<() => void> = [];
  return {
    handle(req, res, route) {
      const method = req.method ?? 'GET';
      const exchange = new Exchange(requestIdFor(req.headers['x-request-id']), route, method, res, routeMetrics.of(route, method));
      // x-request-id goes out with whichever response this is (relayed, 422 or error), not by an
      // early setHeader(): a response with no headers set yet is written from one object by Node,
      // without building its per-header table first.
      exchange.metrics.inflight.inc();
      open += 1;
      res.once('close', () => {
        completeExchange(exchange, deps);
        open -= 1;
        if (open === 0 && idleWaiters.length > 0) {
          for (const wake of idleWaiters) wake();
          idleWaiters = [];
        }
      });
      handle(req, exchange).catch((err: unknown) => fail(exchange, err));
    },
    idle() {
      return open === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
