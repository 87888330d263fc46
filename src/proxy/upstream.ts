import http, { type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Stream } from 'node:stream';
import { ProxyServer } from 'http-proxy-3';
import { errors, type GatewayError } from '../errors.js';
import type { UpstreamConfig, UpstreamName } from '../config/index.js';
import type { UpstreamErrorKind } from './upstream-error.js';

/** What the caller learns about one forwarded exchange. */
export interface ForwardHandlers {
  /** Upstream response headers arrived; the caller relays the body itself. */
  onResponse(upstreamResponse: IncomingMessage): void;
  /** No response: refused, reset or timed out. `error` is the 502/504 to answer with. */
  onFailure(kind: UpstreamErrorKind, error: GatewayError): void;
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
   */
  forward(req: IncomingMessage, res: ServerResponse, body: Stream | undefined, handlers: ForwardHandlers): ForwardHandle;
  close(): void;
}

interface Pending {
  handlers: ForwardHandlers;
  timer: NodeJS.Timeout;
  upstreamRequest?: ClientRequest;
  settled: boolean;
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);

function classify(err: NodeJS.ErrnoException): UpstreamErrorKind {
  return err.code !== undefined && CONNECT_CODES.has(err.code) ? 'connect' : 'reset';
}

/** What forward() needs of its upstream, built once by createUpstream. */
interface Pool {
  readonly name: UpstreamName;
  readonly config: UpstreamConfig;
  readonly proxy: ProxyServer;
  /** The exchange of each request in flight: the proxy's events name only the request. */
  readonly pending: WeakMap<IncomingMessage, Pending>;
}

function keepAliveAgent(target: URL, maxSockets: number): http.Agent {
  const agentOptions = { keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 64), scheduling: 'lifo' as const };
  return target.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
}

function proxyServer(target: URL, agent: http.Agent, config: UpstreamConfig): ProxyServer {
  return new ProxyServer({
    target,
    agent,
    // Without this the library would pipe the response itself; we relay it to meter usage.
    selfHandleResponse: true,
    xfwd: true,
    // Forward req.url exactly as received (no URL re-parsing or normalisation of the path).
    toProxy: true,
    // A bare origin has no path to prepend; saying so spares a `new URL` of the target per request.
    prependPath: target.pathname !== '/' || target.search !== '',
    headers: config.auth === 'passthrough' ? undefined : { authorization: `Bearer ${config.auth.bearer}` },
    // Set per request (chat bodies). http-proxy-3 copies these options with `{ ...options,
    // ...perRequest }` on every request; V8 overwrites a property the copy already has ~20×
    // faster than it adds a new one, so the key is declared here.
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

function fail(entry: Pending, kind: UpstreamErrorKind, error: GatewayError): void {
  if (settle(entry)) entry.handlers.onFailure(kind, error);
}

/** Hands each exchange its upstream request (for abort and timeout) and its response headers. */
function followExchanges(proxy: ProxyServer, pending: WeakMap<IncomingMessage, Pending>): void {
  proxy.on('proxyReq', (upstreamRequest: ClientRequest, req: IncomingMessage) => {
    const entry = pending.get(req);
    if (entry) entry.upstreamRequest = upstreamRequest;
  });
  proxy.on('proxyRes', (upstreamResponse: IncomingMessage, req: IncomingMessage) => {
    const entry = pending.get(req);
    if (!entry || !settle(entry)) {
      upstreamResponse.resume();
      return;
    }
    entry.handlers.onResponse(upstreamResponse);
  });
}

/** Upstream.forward of one pool: the exchange settles once, by response, failure, client close or abort. */
function forward(
  { name, config, proxy, pending }: Pool,
  req: IncomingMessage,
  res: ServerResponse,
  body: Stream | undefined,
  handlers: ForwardHandlers,
): ForwardHandle {
  // Our own timer: http-proxy-3's proxyTimeout surfaces as a reset, and a timeout must answer 504.
  const entry: Pending = {
    handlers,
    settled: false,
    timer: setTimeout(() => {
      fail(entry, 'timeout', errors.upstreamTimeout(name, config.timeoutMs));
      entry.upstreamRequest?.destroy();
    }, config.timeoutMs),
  };
  pending.set(req, entry);
  // A client that goes away first: http-proxy-3 destroys the upstream request; stop our timer.
  res.once('close', () => {
    settle(entry);
  });
  proxy.web(req, res, body ? { buffer: body } : {}, (err: Error) => {
    const kind = classify(err as NodeJS.ErrnoException);
    fail(entry, kind, kind === 'connect' ? errors.upstreamRefused(name) : errors.upstreamClosed(name));
  });
  return {
    abort() {
      settle(entry);
      entry.upstreamRequest?.destroy();
    },
  };
}

/** One pooled upstream: a keep-alive agent and an http-proxy-3 server built once from config. */
export function createUpstream(name: UpstreamName, config: UpstreamConfig): Upstream {
  const target = new URL(config.url);
  const agent = keepAliveAgent(target, config.maxSockets);
  const pool: Pool = { name, config, proxy: proxyServer(target, agent, config), pending: new WeakMap() };
  followExchanges(pool.proxy, pool.pending);
  return {
    name,
    idleTimeoutMs: config.idleTimeoutMs,
    identityHeaders: config.identityHeaders,
    forward: (req, res, body, handlers) => forward(pool, req, res, body, handlers),
    close() {
      agent.destroy();
      pool.proxy.close();
    },
  };
}
