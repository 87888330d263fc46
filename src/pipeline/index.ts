import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { clientAddress, type AuthFailureLimit, type Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { Limiter } from '../limits/index.js';
import { requestIdFor } from '../observability/index.js';
import { resolveProject } from '../projects/index.js';
import { CLIENT_FORWARDING_HEADERS, IDENTITY_HEADERS, type BufferBudget, type RouteSpec, type Upstream, type UpstreamName } from '../proxy/index.js';
import type { OwnershipGuard } from '../ownership/index.js';
import type { ChatBodyChecker } from '../validation/index.js';
import { bodySettings, prepareBody } from './body.js';
import { completeExchange, type CompletionDeps } from './complete.js';
import { Exchange, type Caller, type ChatTerms } from './exchange.js';
import { failExchange } from './fail.js';
import { forwardExchange, type ForwardDeps } from './forward.js';
import { checkOwnership } from './ownership.js';

/** What the pipeline needs beyond what completing an exchange does (metrics, logger, usage store). */
export interface PipelineDeps extends CompletionDeps {
  readonly config: Config;
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
}

/** What a request other than a chat completion reserves: nothing, and token and cost limits do not apply to it. */
const NO_RESERVATION = { estimatedTokens: 0, estimatedCostNanos: 0, spends: false } as const;

export interface V1Handler {
  handle(req: IncomingMessage, res: ServerResponse, route: RouteSpec): void;
  /** Resolves once no exchange is open (each completed one has started settling its limits). */
  idle(): Promise<void>;
}

/**
 * Builds the handler for every /v1 route: auth → project → body → limits → upstream → tap →
 * settle. Each step hands the next a typed value; what the route does at each step is read
 * from its spec; every failure goes through failExchange.
 */
export function createV1Handler(deps: PipelineDeps): V1Handler {
  const { config, metrics } = deps;
  const projectHeader = config.metering.projectHeader.toLowerCase();
  const bodies = bodySettings(config, deps.bufferBudget, deps.chatChecker);
  const fail = (exchange: Exchange, err: unknown): void => failExchange(exchange, err, deps);
  const forwarding: ForwardDeps = {
    metrics,
    upstreams: deps.upstreams,
    untrustedHeaders: new Set([...Object.values(IDENTITY_HEADERS), ...(config.server.trustProxy ? [] : CLIENT_FORWARDING_HEADERS)]),
    fail,
  };

  /** What a request reserves before it is forwarded: its estimated tokens, priced for budgets. */
  const reservationFor = (chat: ChatTerms | undefined): { estimatedTokens: number; estimatedCostNanos: number; spends: boolean } => {
    if (!chat) return NO_RESERVATION;
    const completion = chat.estimatedTokens - chat.promptTokens;
    const estimatedCostNanos = deps.prices.costNanos(chat.model, { prompt_tokens: chat.promptTokens, completion_tokens: completion });
    return { estimatedTokens: chat.estimatedTokens, estimatedCostNanos, spends: true };
  };

  const identify = async (req: IncomingMessage): Promise<Caller> => {
    const address = clientAddress(req, config.server.trustProxy);
    const principal = await deps.authFailureLimit.guard(address, () => deps.authenticator.authenticate(req.headers.authorization));
    const value = req.headers[projectHeader];
    const project = resolveProject(principal, Array.isArray(value) ? value[0] : value, config.metering.projectHeader);
    return { principal, project };
  };

  const handle = async (req: IncomingMessage, exchange: Exchange): Promise<void> => {
    const { route } = exchange;
    const caller = (exchange.caller = await identify(req));
    const prepared = (exchange.body = await prepareBody(route, req, bodies, deps.ownership !== undefined));
    const { body, answer } = await checkOwnership(deps.ownership, route, req, caller, prepared, bodies);
    exchange.body = body;
    const ownHeaders: OutgoingHttpHeaders = { 'x-request-id': exchange.id };
    if (route.limited) {
      const admission = (exchange.admission = await deps.limiter.admit({ ...caller, ...reservationFor(body.chat) }));
      Object.assign(ownHeaders, admission.headers);
    }
    forwardExchange(req, exchange, body, ownHeaders, forwarding, answer);
  };

  const open = new OpenExchanges();
  return {
    handle(req, res, route) {
      const method = req.method ?? 'GET';
      const routeMetrics = metrics.forRoute({ route: route.template, method, upstream: route.upstream });
      const exchange = new Exchange(requestIdFor(req.headers['x-request-id']), route, method, res, routeMetrics);
      // x-request-id goes out with whichever response this is (relayed, 422 or error), not by an
      // early setHeader(): a response with no headers set yet is written from one object by Node,
      // without building its per-header table first.
      routeMetrics.started();
      open.add();
      res.once('close', () => {
        completeExchange(exchange, deps);
        open.remove();
      });
      handle(req, exchange).catch((err: unknown) => fail(exchange, err));
    },
    idle: () => open.idle(),
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
