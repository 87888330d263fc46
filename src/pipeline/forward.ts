import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { errors } from '../errors.js';
import type { Metrics } from '../observability/index.js';
import { addIdentityHeaders, endToEndHeaders, forwardableHeaders, relayResponse, type ForwardHandlers, type Upstream, type UpstreamName } from '../proxy/index.js';
import type { RouteChain } from './chain.js';
import type { Exchange, UpstreamLeg } from './exchange.js';
import type { AnswerRule } from './ownership.js';
import { chatBodyFor, FALLBACK_STATUSES, type FallbackPlan } from './routing.js';
import type { PreparedBody } from './values.js';

/** The handle of a request whose forward() has not returned yet: nothing to abort. */
const NOT_SENT = { abort: () => undefined };

export interface ForwardDeps {
  readonly metrics: Metrics;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
  /**
   * Headers a client may not set, dropped before the gateway sets its own: the identity headers
   * always, forwarding ones unless behind a trusted proxy.
   */
  readonly untrustedHeaders: ReadonlySet<string>;
  /** Answers a request that failed after it left (upstream refused, timed out, upload too large). */
  fail(exchange: Exchange, err: unknown): void;
}

/** What leaves for the upstream: the prepared body, the gateway's own response headers, what to do with the answer. */
export interface Outbound {
  readonly body: PreparedBody;
  /** Request id and rate-limit headers: they go out with whatever the upstream answers. */
  readonly ownHeaders: OutgoingHttpHeaders;
  /** The ownership rule's handling of the answer, if any. */
  readonly answer: AnswerRule | undefined;
  readonly meter: RouteChain['meter'];
  /** Where it goes: the route's upstream, or the one its chat's model names (SPEC 22). */
  readonly upstream: Upstream;
  /** A chat's fallbacks, when its model has any (SPEC 22). */
  readonly fallbacks: FallbackPlan | undefined;
}

/**
 * The one place the request's headers are made: the client's (less hop-by-hop and untrusted
 * ones), what the body step re-sends them with, the request id, and the caller's identity.
 */
function prepareRequestHeaders(req: IncomingMessage, clientHeaders: IncomingMessage['headers'], exchange: Exchange, body: PreparedBody, upstream: Upstream, untrusted: ReadonlySet<string>): void {
  // http-proxy-3 sends req.headers (adding X-Forwarded-* after the client's trusted ones).
  const headers = forwardableHeaders(clientHeaders, untrusted);
  if (body.headers) for (const name in body.headers) headers[name] = body.headers[name];
  headers['x-request-id'] = exchange.id;
  // The upstream continues the gateway's trace (the client's trace headers are untrusted ones when tracing is on).
  exchange.trace?.injectInto(headers);
  if (upstream.identityHeaders && exchange.caller) {
    const { principal, project } = exchange.caller;
    addIdentityHeaders(headers, { team: project.team, project: project.project, keyId: principal.id });
  }
  req.headers = headers;
}

/** What a header value may hold (Node refuses anything else); a model name is any JSON string. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;
/** x-tollgate-model's longest value: a client's header limit (Node: 16 KiB for all) must not be reached by a name. */
const MAX_MODEL_HEADER = 1024;
/** The bytes encodeURIComponent leaves as they are. */
const UNRESERVED = /[A-Za-z0-9\-_.!~*'()]/;

/**
 * A model name as a header value: as it is when printable ASCII (and not too long); else its
 * UTF-8 bytes percent-encoded as encodeURIComponent does (a lone surrogate as U+FFFD, where
 * encodeURIComponent would throw), cut before MAX_MODEL_HEADER between two characters.
 */
function modelHeader(model: string): string {
  if (model.length <= MAX_MODEL_HEADER && HEADER_SAFE.test(model)) return model;
  let out = '';
  for (const char of model) {
    const piece = char.length === 1 && UNRESERVED.test(char) ? char : percentEncoded(char);
    if (out.length + piece.length > MAX_MODEL_HEADER) break;
    out += piece;
  }
  return out;
}

const percentEncoded = (char: string): string => [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** Sends an admitted request upstream and relays the response through the route's meter. */
export function forwardExchange(req: IncomingMessage, exchange: Exchange, outbound: Outbound, deps: ForwardDeps): void {
  const { body } = outbound;
  const { chat } = body;
  exchange.trace?.startUpstream({ upstream: outbound.upstream.name, method: exchange.method, chat: chat && { model: chat.model, sampling: chat.sampling, raw: body.raw } });
  const sentAt = performance.now();
  const overheadMs = sentAt - exchange.startedAt;
  exchange.metrics.overhead.observe(overheadMs / 1000);
  // What the gateway itself took before the request left (auth, body, checks, limits): the same
  // number as the overhead histogram, per response, so a client can tell gateway from upstream.
  outbound.ownHeaders['x-tollgate-overhead-ms'] = overheadMs.toFixed(2);
  // Kept whole: a fallback sends the request again, its headers made anew for its upstream.
  send(req, req.headers, exchange, outbound, deps);
}

/** One trip upstream: to outbound.upstream, or — after a fallback — to the fallback's. */
function send(req: IncomingMessage, clientHeaders: IncomingMessage['headers'], exchange: Exchange, outbound: Outbound, deps: ForwardDeps): void {
  const { body, ownHeaders, upstream, fallbacks } = outbound;
  // Counted under the upstream that serves it (a model route's, a fallback's), not the route's default.
  if (exchange.metrics.upstream !== upstream.name) exchange.metrics = deps.metrics.forRoute({ route: exchange.route.template, method: exchange.method, upstream: upstream.name });
  prepareRequestHeaders(req, clientHeaders, exchange, body, upstream, deps.untrustedHeaders);
  // The model that serves, after alias resolution and any fallback (SPEC 22).
  if (body.chat) ownHeaders['x-tollgate-model'] = modelHeader(body.chat.model);
  const stream = body.open((err) => {
    exchange.leg?.handle.abort();
    deps.fail(exchange, err);
  });
  const leg: UpstreamLeg = { sentAt: exchange.leg?.sentAt ?? performance.now(), handle: NOT_SENT, completed: false };
  exchange.leg = leg;
  const fallBack = fallbacks && ((reason: string): boolean => sendToFallback(req, clientHeaders, exchange, outbound, deps, reason));
  leg.handle = upstream.forward(req, exchange.res, stream, legHandlers(exchange, leg, outbound, deps, fallBack), fallbacks?.avoidOn(upstream));
}

/** Sends the chat to its next fallback (SPEC 22); false when none is left. */
function sendToFallback(req: IncomingMessage, clientHeaders: IncomingMessage['headers'], exchange: Exchange, outbound: Outbound, deps: ForwardDeps, reason: string): boolean {
  const next = outbound.fallbacks!.next();
  if (next === undefined) return false;
  const from = outbound.body.chat!.model;
  deps.metrics.recordModelFallback(from, next.model, reason);
  exchange.fallbackFrom ??= from;
  const body = (exchange.body = chatBodyFor(outbound.body, next.model));
  send(req, clientHeaders, exchange, { ...outbound, body, upstream: next.upstream }, deps);
  return true;
}

/**
 * What happens to one trip's outcome: an answer is relayed (or read whole for the ownership
 * rule); a failure answers the client — unless `fallBack` takes the chat elsewhere first, which
 * it may only while nothing has reached the client (response headers included).
 */
function legHandlers(exchange: Exchange, leg: UpstreamLeg, outbound: Outbound, deps: ForwardDeps, fallBack: ((reason: string) => boolean) | undefined): ForwardHandlers {
  const { ownHeaders, answer, upstream, fallbacks } = outbound;
  return {
    onResponse(upstreamResponse, target) {
      const status = upstreamResponse.statusCode ?? 502;
      fallbacks?.reachedTarget(upstream, target);
      if (fallBack && FALLBACK_STATUSES.has(status) && fallBack(String(status))) {
        upstreamResponse.resume();
        return;
      }
      leg.respondedAt = performance.now();
      leg.upstreamStatus = upstreamResponse.statusCode;
      exchange.trace?.upstreamAnswered(upstreamResponse.statusCode ?? 0);
      exchange.metrics.ttfb.observe((leg.respondedAt - leg.sentAt) / 1000);
      if (answer?.buffered && status >= 200 && status < 300) {
        answerAfterReading(upstreamResponse, exchange, leg, ownHeaders, answer, deps);
        return;
      }
      if (answer && !answer.buffered) void answer.settle(status, undefined).catch(() => undefined);
      relay(upstreamResponse, exchange, leg, outbound, upstream.idleTimeoutMs, deps);
    },
    onFailure(kind, error, target) {
      deps.metrics.recordUpstreamError(upstream.name, kind);
      // A refused connection sent nothing; a reset or a timeout may have reached the target.
      if (kind !== 'connect') fallbacks?.reachedTarget(upstream, target);
      if (fallBack?.(kind)) return;
      deps.fail(exchange, error);
    },
  };
}

function relay(upstreamResponse: IncomingMessage, exchange: Exchange, leg: UpstreamLeg, outbound: Outbound, idleTimeoutMs: number, deps: ForwardDeps): void {
  let tap = upstreamResponse.statusCode === 200 ? outbound.meter(upstreamResponse, outbound.body.chat) : undefined;
  if (tap && exchange.trace) tap = exchange.trace.watchReply(tap, isEventStream(upstreamResponse.headers['content-type']));
  relayResponse(upstreamResponse, exchange.res, outbound.ownHeaders, tap, idleTimeoutMs, ({ completed, stalled, tapResult }) => {
    leg.completed = completed;
    leg.seen = tapResult;
    if (stalled) {
      deps.metrics.recordUpstreamError(outbound.upstream.name, 'idle');
      exchange.errorCode = 'upstream_idle';
    }
  });
}

const isEventStream = (contentType: string | undefined): boolean => contentType?.toLowerCase().startsWith('text/event-stream') ?? false;

/** A creation's answer is tiny: this is as much as the gateway reads of one before giving up on it. */
const MAX_CREATION_ANSWER_BYTES = 1024 ** 2;

/**
 * Reads a 2xx creation answer whole, lets the ownership rule record it (or replace it with its
 * error: another team's id is never handed out), then sends it.
 */
function answerAfterReading(
  upstreamResponse: IncomingMessage,
  exchange: Exchange,
  leg: UpstreamLeg,
  ownHeaders: OutgoingHttpHeaders,
  answer: AnswerRule,
  deps: ForwardDeps,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  upstreamResponse.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_CREATION_ANSWER_BYTES) {
      upstreamResponse.destroy();
      deps.fail(exchange, errors.upstreamCreationTooLarge());
      return;
    }
    chunks.push(chunk);
  });
  upstreamResponse.on('error', () => deps.fail(exchange, errors.upstreamBrokeOff()));
  upstreamResponse.on('end', () => {
    if (size > MAX_CREATION_ANSWER_BYTES) return;
    const bytes = Buffer.concat(chunks, size);
    answer.settle(upstreamResponse.statusCode ?? 200, bytes).then(
      (refusal) => {
        leg.completed = true;
        if (refusal) return deps.fail(exchange, refusal);
        const headers = endToEndHeaders(upstreamResponse.headers);
        for (const name in ownHeaders) headers[name] = ownHeaders[name];
        headers['content-length'] = bytes.length;
        exchange.res.writeHead(upstreamResponse.statusCode ?? 200, headers);
        exchange.res.end(bytes);
      },
      (err: unknown) => deps.fail(exchange, err),
    );
  });
}
