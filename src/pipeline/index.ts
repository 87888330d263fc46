import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { clientAddress, type AuthFailureLimit, type Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { Limiter } from '../limits/index.js';
import { requestIdFor } from '../observability/index.js';
import { resolveProject } from '../projects/index.js';
import { CLIENT_FORWARDING_HEADERS, IDENTITY_HEADERS, type BufferBudget, type RouteSpec, type RouteTable, type Upstream, type UpstreamName } from '../proxy/index.js';
import type { OwnershipGuard } from '../ownership/index.js';
import { TRACE_CONTEXT_HEADERS, type Tracing } from '../tracing/index.js';
import type { ChatBodyChecker } from '../validation/index.js';
import type { Models } from '../models/index.js';
import { bodySettings } from './body.js';
import { buildRouteChains, type RouteChain } from './chain.js';
import type { AnswerRule } from './ownership.js';
import { answeredHere, answerModels } from './models.js';
import { completeExchange, type CompletionDeps } from './complete.js';
import { Exchange } from './exchange.js';
import { failExchange } from './fail.js';
import { forwardExchange, type ForwardDeps } from './forward.js';
import { chatBodyFor, FallbackPlan } from './routing.js';
import { admissionDescriber } from './traced.js';
import type { Caller } from './values.js';

/** What the pipeline needs beyond what completing an exchange does (metrics, logger, usage store). */
export interface PipelineDeps extends CompletionDeps {
  /** The settings the steps read: the listener's (trusted proxy, body limits) and metering's (project header). */
  readonly config: Pick<Config, 'server' | 'metering'>;
  readonly authenticator: Authenticator;
  /** Refuses addresses that sent too many bad credentials, before any key check (SPEC 15). */
  readonly authFailureLimit: AuthFailureLimit;
  readonly limiter: Limiter;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
  /** Bytes of chat bodies held at once, across requests (`server.maxBufferedBytes`). */
  readonly bufferBudget: BufferBudget;
  readonly chatChecker: ChatBodyChecker;
  /** Ownership checks, when the configuration turns them on. */
  readonly ownership: OwnershipGuard | undefined;
  /** The routes to build chains for. */
  readonly routes: RouteTable;
  /** Spans for every request, when `tracing.enabled` (SPEC 18); undefined: none are made. */
  readonly tracing: Tracing | undefined;
  /** Who may use which model, and each caller's model list (SPEC 21). */
  readonly models: Models;
}

export interface V1Handler {
  handle(req: IncomingMessage, res: ServerResponse, route: RouteSpec): void;
  /** Resolves once no exchange is open (each completed one has started settling its limits). */
  idle(): Promise<void>;
}

/**
 * Builds the handler for every /v1 route. Each route's steps are chosen once, here, from its
 * spec (its chain); a request opens an exchange, runs its chain (stepRunner) and completes when
 * its response closes; every failure goes through failExchange.
 */
export function createV1Handler(deps: PipelineDeps): V1Handler {
  const chains = buildRouteChains(deps.routes.routes, {
    bodies: bodySettings(deps.config, deps.bufferBudget, deps.chatChecker),
    prices: deps.prices,
    ownership: deps.ownership,
    models: { access: deps.models.access, listing: deps.models.listing, metrics: deps.metrics },
  });
  const fail = (exchange: Exchange, err: unknown): void => failExchange(exchange, err, deps);
  const run = stepRunner(deps, fail);
  const open = new OpenExchanges();
  return {
    handle(req, res, route) {
      const exchange = openExchange(req, res, route, deps.metrics);
      if (deps.tracing) exchange.trace = deps.tracing.startRequest(req, route.template, exchange.method);
      open.add();
      res.once('close', () => {
        completeExchange(exchange, deps);
        open.remove();
      });
      run(req, exchange, chains.get(route)!).catch((err: unknown) => fail(exchange, err));
    },
    idle: () => open.idle(),
  };
}

/**
 * The steps of one request, in order: identify (key, then project) -> body -> ownership (when
 * the route checks it) -> limits (when it is limited) -> forward. Each step hands the next a
 * value nothing changes later. Each step's span is marked here (begin, the step, end), not inside
 * the step: with tracing off `trace` is undefined and the steps are just called. A step that
 * throws is ended as refused by failExchange (trace.refused), which every failure goes through.
 */
function stepRunner(deps: PipelineDeps, fail: ForwardDeps['fail']): (req: IncomingMessage, exchange: Exchange, chain: RouteChain) => Promise<void> {
  const forwarding = forwardingOf(deps, fail);
  const identify = identifier(deps);
  const describeAdmission = admissionDescriber();
  // With no routing table every chat goes to the route's upstream, as before: nothing to look up.
  const router = deps.models.router.active ? deps.models.router : undefined;
  const fallbackDeps = { access: deps.models.access, router: deps.models.router, upstreams: deps.upstreams };
  return async (req, exchange, chain) => {
    const { trace } = exchange;
    trace?.begin('auth');
    const caller = (exchange.caller = await identify(req));
    trace?.end();
    trace?.begin('validate');
    let body = (exchange.body = await chain.readBody(req, caller));
    trace?.end();
    const modelRoute = router && body.chat ? (exchange.modelRoute = router.resolve(body.chat.model)) : undefined;
    // An alias: the body carries its target, and everything after (access, prices, limits) reads the target (SPEC 22).
    if (modelRoute?.aliased) body = exchange.body = chatBodyFor(body, modelRoute.model);
    // Before the limits and before anything is forwarded (SPEC 21): a refused model costs nothing.
    chain.checkModel?.(caller, body, modelRoute?.requested);
    let answer: AnswerRule | undefined;
    if (chain.ownershipChecked) {
      trace?.begin('ownership');
      answer = await chain.checkOwnership(req, caller, body);
      trace?.end();
    }
    const ownHeaders: OutgoingHttpHeaders = { 'x-request-id': exchange.id };
    if (chain.reserve) {
      const reserve = chain.reserve(body.chat);
      trace?.begin('limits');
      const admission = (exchange.admission = await deps.limiter.admit({ ...caller, ...reserve }));
      trace?.end(admission, describeAdmission);
      Object.assign(ownHeaders, admission.headers);
    }
    if (answeredHere(chain.route, caller, deps.models.access, deps.models.listing)) return answerLocally(exchange, ownHeaders, await answerModels(req, caller, deps.models.listing));
    const upstream = deps.upstreams[modelRoute?.upstream ?? chain.route.upstream]!;
    const fallbacks = modelRoute && modelRoute.fallbacks.length > 0 ? new FallbackPlan(caller, modelRoute, fallbackDeps) : undefined;
    forwardExchange(req, exchange, { body, ownHeaders, answer, meter: chain.meter, upstream, fallbacks }, forwarding);
  };
}

/** A route the gateway answers itself: 200 JSON with the request's own headers (id, limits). */
function answerLocally(exchange: Exchange, ownHeaders: OutgoingHttpHeaders, json: Buffer): void {
  exchange.res.writeHead(200, { ...ownHeaders, 'content-type': 'application/json', 'content-length': json.length });
  exchange.res.end(json);
}

/** The record of one request, with its route's metric series looked up once. */
function openExchange(req: IncomingMessage, res: ServerResponse, route: RouteSpec, metrics: PipelineDeps['metrics']): Exchange {
  const method = req.method ?? 'GET';
  const routeMetrics = metrics.forRoute({ route: route.template, method, upstream: route.upstream });
  // x-request-id goes out with whichever response this is (relayed, 422 or error), not by an
  // early setHeader(): a response with no headers set yet is written from one object by Node,
  // without building its per-header table first.
  routeMetrics.started();
  return new Exchange(requestIdFor(req.headers['x-request-id']), route, method, res, routeMetrics);
}

/**
 * What the forward step needs, prepared once: the pools, and the client headers never to pass
 * on. With tracing on, every request has a trace, and its upstream hop carries the gateway's
 * trace context: the client's `traceparent`/`tracestate` (possibly malformed) are left out with
 * the rest, rather than deleted from the copy (a delete makes V8 keep that object as a slow dictionary).
 */
function forwardingOf(deps: PipelineDeps, fail: ForwardDeps['fail']): ForwardDeps {
  const untrusted = [
    ...Object.values(IDENTITY_HEADERS),
    ...(deps.config.server.trustProxy ? [] : CLIENT_FORWARDING_HEADERS),
    ...(deps.tracing ? TRACE_CONTEXT_HEADERS : []),
  ];
  return { metrics: deps.metrics, upstreams: deps.upstreams, untrustedHeaders: new Set(untrusted), fail };
}

/** The identify step: the bearer key (past the bad-credential throttle), then the project header. */
function identifier(deps: PipelineDeps): (req: IncomingMessage) => Promise<Caller> {
  const { trustProxy } = deps.config.server;
  const headerName = deps.config.metering.projectHeader;
  const projectHeader = headerName.toLowerCase();
  return async (req) => {
    const address = clientAddress(req, trustProxy);
    const principal = await deps.authFailureLimit.guard(address, () => deps.authenticator.authenticate(req.headers.authorization));
    const value = req.headers[projectHeader];
    const project = resolveProject(principal, Array.isArray(value) ? value[0] : value, headerName);
    return { principal, project };
  };
}

/** Counts exchanges in progress, so shutdown and tests can wait until none is. */
class OpenExchanges {
  private count = 0;
  private waiters: Array<() => void> = [];

  add(): void {
    this.count += 1;
  }

  remove(): void {
    this.count -= 1;
    if (this.count > 0 || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
export { admissionDescriber } from './traced.js';
export { modelCheckFor } from './models.js';
export type { Caller, PreparedBody } from './values.js';
