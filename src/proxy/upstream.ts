import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Stream } from 'node:stream';
import { ProxyServer } from 'http-proxy-3';
import { errors, type GatewayError } from '../errors.js';
import type { UpstreamConfig, UpstreamName } from '../config/index.js';
import type { UpstreamErrorKind, UpstreamRetryReason } from './upstream-error.js';
import { BufferedBody } from './body.js';
import { startHealthChecks } from './pool/health-check.js';
import { TargetPool } from './pool/pool.js';
import type { PoolEvents, PoolTarget } from './pool/targets.js';

export type { PoolEvents } from './pool/targets.js';

/** What the caller learns about one forwarded exchange. */
export interface ForwardHandlers {
  /** Upstream response headers arrived; the caller relays the body itself. */
  onResponse(upstreamResponse: IncomingMessage, target: string): void;
  /** No response: refused, reset or timed out. `error` is the 502/504 to answer with; `target` the last one tried. */
  onFailure(kind: UpstreamErrorKind, error: GatewayError, target: string): void;
}

/** Lets the caller give up on an exchange it already answered (e.g. an upload grew past its limit). */
export interface ForwardHandle {
  abort(): void;
}

export interface Upstream {
  readonly name: UpstreamName;
  /** After the response headers, the longest the body may go silent (`upstreams.*.idleTimeoutMs`). */
  readonly idleTimeoutMs: number;
  /** Whether requests carry the identity headers (`upstreams.*.identityHeaders`). */
  readonly identityHeaders: boolean;
  /**
   * Sends the request upstream. `body` replaces the client's stream when the gateway has read
   * or wraps it (chat bytes as a BufferedBody, counted preview uploads); it is pipe()d upstream.
   * `avoid`: targets (`host:port`) that must not get this request (a chat they already received, SPEC 22).
   */
  forward(req: IncomingMessage, res: ServerResponse, body: Stream | undefined, handlers: ForwardHandlers, avoid?: readonly string[]): ForwardHandle;
  /** Each target's `host:port`. */
  readonly targetKeys: readonly string[];
  /** Each target's state, for /readyz. */
  targetStates(): ReturnType<TargetPool['states']>;
  close(): void;
}

/** What the pool reports beyond target state: each retry. */
export interface UpstreamEvents extends PoolEvents {
  retried(upstream: string, reason: UpstreamRetryReason): void;
}

interface Pending {
  handlers: ForwardHandlers;
  readonly res: ServerResponse;
  readonly body: Stream | undefined;
  timer: NodeJS.Timeout;
  upstreamRequest?: ClientRequest | undefined;
  settled: boolean;
  /** The target of the current attempt. */
  target: PoolTarget;
  /** Counts attempts; an outcome of an earlier (or cancelled: -1) attempt is ignored. */
  attempt: number;
  /** The current attempt counts in target.outstanding (pools of several only). */
  holding: boolean;
  /** Targets already tried (and those to avoid), made on the first retry or when some are avoided. */
  tried: PoolTarget[] | undefined;
  /** How many of `tried` were avoided rather than tried: they use up no retry. */
  avoided: number;
  /** X-Forwarded-* as the client sent them: http-proxy-3 appends to them on every attempt. */
  forwarded: (string | string[] | undefined)[] | undefined;
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
const FORWARDED = ['x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto', 'x-forwarded-host'] as const;
/** Answers that count as a target failure (SPEC 19) and that a GET/HEAD may be retried after. */
const FAILING_STATUS = new Set([502, 503, 504]);

function classify(err: NodeJS.ErrnoException): UpstreamErrorKind {
  return err.code !== undefined && CONNECT_CODES.has(err.code) ? 'connect' : 'reset';
}

/** What forward() needs of its upstream, built once by createUpstream. */
interface Pool {
  readonly name: UpstreamName;
  readonly config: UpstreamConfig;
  readonly proxy: ProxyServer;
  readonly targets: TargetPool;
  readonly events: UpstreamEvents | undefined;
  /** The exchange of each request in flight: the proxy's events name only the request. */
  readonly pending: WeakMap<IncomingMessage, Pending>;
}

function proxyServer(first: PoolTarget, config: UpstreamConfig): ProxyServer {
  return new ProxyServer({
    // Each request names its target, agent and prependPath (PoolTarget.options); declared here so
    // http-proxy-3's per-request `{ ...options, ...perRequest }` copy overwrites rather than adds.
    ...first.options,
    // Without this the library would pipe the response itself; we relay it to meter usage.
    selfHandleResponse: true,
    xfwd: true,
    // Forward req.url exactly as received (no URL re-parsing or normalisation of the path).
    toProxy: true,
    headers: config.auth === 'passthrough' ? undefined : { authorization: `Bearer ${config.auth.bearer}` },
    // Set per request (chat bodies); declared for the same reason.
    buffer: undefined,
  });
}

/** Marks the exchange settled and stops its timer; false when it already was (only the first outcome counts). */
function settle(entry: Pending): boolean {
  if (entry.settled) return false;
  entry.settled = true;
  clearTimeout(entry.timer);
  return true;
}

function release(entry: Pending): void {
  if (!entry.holding) return;
  entry.holding = false;
  entry.target.outstanding -= 1;
}

function fail(entry: Pending, kind: UpstreamErrorKind, error: GatewayError): void {
  if (settle(entry)) entry.handlers.onFailure(kind, error, entry.target.key);
}

/** Whether the request may be sent again: its body can be replayed and, once sent, it only reads. */
function mayRepeat(req: IncomingMessage, body: Stream | undefined, reachedTarget: boolean): boolean {
  const method = req.method;
  const read = method === 'GET' || method === 'HEAD';
  if (reachedTarget && !read) return false;
  return body === undefined ? read : body instanceof BufferedBody;
}

/** Hands each exchange its upstream request (for abort and timeout) and its response headers. */
function followExchanges(pool: Pool): void {
  const { proxy, pending } = pool;
  proxy.on('proxyReq', (upstreamRequest: ClientRequest, req: IncomingMessage) => {
    const entry = pending.get(req);
    if (entry) entry.upstreamRequest = upstreamRequest;
  });
  proxy.on('proxyRes', (upstreamResponse: IncomingMessage, req: IncomingMessage) => {
    const entry = pending.get(req);
    if (!entry || entry.settled) {
      upstreamResponse.resume();
      return;
    }
    answered(pool, entry, req, upstreamResponse);
  });
}

/** Response headers of the current attempt: a 502/503/504 counts against the target, and a read may go elsewhere. */
function answered(pool: Pool, entry: Pending, req: IncomingMessage, upstreamResponse: IncomingMessage): void {
  const { targets } = pool;
  if (FAILING_STATUS.has(upstreamResponse.statusCode ?? 0)) {
    const now = Date.now();
    targets.failed(entry.target, now);
    if (targets.several && mayRepeat(req, entry.body, true) && retry(pool, entry, req, 'status', now)) {
      upstreamResponse.resume();
      return;
    }
  } else {
    targets.succeeded(entry.target);
  }
  if (entry.holding) {
    const held = entry;
    upstreamResponse.once('close', () => release(held));
  }
  settle(entry);
  entry.handlers.onResponse(upstreamResponse, entry.target.key);
}

/** Nothing per request: a pool of one has its target in the server's own options. */
const NO_OPTIONS = {};

/**
 * What proxy.web() takes for one attempt. A pool of one passes what a single URL always did
 * (nothing, or the body); a pool of several names the target, agent and path handling too.
 */
function requestOptions(several: boolean, target: PoolTarget, body: Stream | undefined): object {
  if (!several) return body ? { buffer: body } : NO_OPTIONS;
  return body ? { ...target.options, buffer: body } : target.options;
}

/** Sends the current attempt to entry.target; its error retries or fails the exchange. */
function attempt(pool: Pool, entry: Pending, req: IncomingMessage): void {
  const { targets, proxy } = pool;
  const target = entry.target;
  const number = (entry.attempt += 1);
  if (targets.several) {
    target.outstanding += 1;
    entry.holding = true;
  }
  proxy.web(req, entry.res, requestOptions(targets.several, target, entry.body), (err: Error) => {
    if (number !== entry.attempt) return;
    release(entry);
    const now = Date.now();
    targets.failed(target, now);
    if (entry.settled) return;
    const kind = classify(err as NodeJS.ErrnoException);
    if (targets.several && mayRepeat(req, entry.body, kind !== 'connect') && retry(pool, entry, req, kind === 'connect' ? 'connect' : 'reset', now)) return;
    fail(entry, kind, kind === 'connect' ? errors.upstreamRefused(pool.name) : errors.upstreamClosed(pool.name));
  });
}

/** Another attempt on a target not yet tried, while retries remain; false when there is none. */
function retry(pool: Pool, entry: Pending, req: IncomingMessage, reason: UpstreamRetryReason, now: number): boolean {
  const tried = (entry.tried ??= []);
  tried.push(entry.target);
  if (tried.length - entry.avoided > pool.config.retries) return false;
  const next = pool.targets.pick(now, tried);
  if (next === undefined) return false;
  release(entry);
  entry.upstreamRequest = undefined;
  entry.target = next;
  // http-proxy-3 appends to X-Forwarded-*: put back what the client sent before it does again.
  FORWARDED.forEach((header, i) => {
    const original = entry.forwarded?.[i];
    if (original === undefined) delete req.headers[header];
    else req.headers[header] = original;
  });
  pool.events?.retried(pool.name, reason);
  attempt(pool, entry, req);
  return true;
}

/** Upstream.forward of one pool: the exchange settles once, by response, failure, client close or abort. */
function forward(pool: Pool, req: IncomingMessage, res: ServerResponse, body: Stream | undefined, handlers: ForwardHandlers, avoid?: readonly string[]): ForwardHandle {
  const { name, config, targets } = pool;
  const avoided = avoid === undefined || avoid.length === 0 ? undefined : targets.targets.filter((target) => avoid.includes(target.key));
  // Our own timer, shared by every attempt: http-proxy-3's proxyTimeout surfaces as a reset, and a timeout must answer 504.
  const entry: Pending = {
    handlers,
    res,
    body,
    settled: false,
    target: targets.several ? targets.pick(Date.now(), avoided)! : targets.targets[0]!,
    attempt: 0,
    holding: false,
    tried: avoided,
    avoided: avoided?.length ?? 0,
    forwarded: targets.several ? FORWARDED.map((header) => req.headers[header]) : undefined,
    timer: setTimeout(() => {
      fail(entry, 'timeout', errors.upstreamTimeout(name, config.timeoutMs));
      cancel(pool, entry, true);
    }, config.timeoutMs),
  };
  pool.pending.set(req, entry);
  // A client that goes away first: http-proxy-3 destroys the upstream request; stop our timer.
  res.once('close', () => {
    if (settle(entry)) cancel(pool, entry, false);
  });
  attempt(pool, entry, req);
  return {
    abort() {
      settle(entry);
      cancel(pool, entry, false);
    },
  };
}

/** Ends the current attempt without an outcome of its own; a timeout counts against its target. */
function cancel(pool: Pool, entry: Pending, timedOut: boolean): void {
  if (entry.attempt === -1) return;
  entry.attempt = -1;
  if (timedOut) pool.targets.failed(entry.target, Date.now());
  release(entry);
  entry.upstreamRequest?.destroy();
}

/** One upstream: its targets (each with a keep-alive agent) behind one http-proxy-3 server built once from config. */
export function createUpstream(name: UpstreamName, config: UpstreamConfig, events?: UpstreamEvents): Upstream {
  const targets = new TargetPool(name, config, events);
  const stopChecks = config.healthCheck ? startHealthChecks(targets, config.healthCheck) : undefined;
  const pool: Pool = { name, config, proxy: proxyServer(targets.targets[0]!, config), targets, events, pending: new WeakMap() };
  followExchanges(pool);
  return {
    name,
    idleTimeoutMs: config.idleTimeoutMs,
    identityHeaders: config.identityHeaders,
    forward: (req, res, body, handlers, avoid) => forward(pool, req, res, body, handlers, avoid),
    targetKeys: targets.targets.map((target) => target.key),
    targetStates: () => targets.states(Date.now()),
    close() {
      stopChecks?.();
      targets.close();
      pool.proxy.close();
    },
  };
}
