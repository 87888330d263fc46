import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAuthenticator, type AuthFailureLimit, type Authenticator, type RuntimeKeys } from './auth/index.js';
import type { Config } from './config/index.js';
import type { Limiter } from './limits/index.js';
import { createPriceBook, type Ledger, type PriceBook } from './metering/index.js';
import { createMetricsEndpoint, type Logger, type Metrics } from './observability/index.js';
import { OwnershipGuard, ownershipPolicy, type OwnershipRegistry } from './ownership/index.js';
import { createV1Handler, type V1Handler } from './pipeline/index.js';
import { createUpstream, resolveRoute, type BufferBudget, type RouteTable, type Upstream, type UpstreamName } from './proxy/index.js';
import { createChatBodyChecker, type ChatBodyChecker } from './validation/index.js';

/** What lives as long as the process: built once, shared by every configuration. */
export interface Services {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly limiter: Limiter;
  readonly ledger: Ledger;
  readonly runtimeKeys: RuntimeKeys;
  readonly ownership: OwnershipRegistry;
  readonly bufferBudget: BufferBudget;
  readonly routes: RouteTable;
  /** Bad-credential counts per client address: they outlive reloads. */
  readonly authFailureLimit: AuthFailureLimit;
}

/**
 * What a configuration builds, rebuilt on every reload: requests started before a reload
 * finish with the parts they started with, new ones get the new parts. Redis, the database,
 * the key cache and the ledger are the same throughout (Services).
 */
export interface Live {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly prices: PriceBook;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
  readonly chatChecker: ChatBodyChecker;
  readonly v1: V1Handler;
  readonly metricsHandler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Routes a /v1 request (a 400/404/405 for a path the table does not know). */
  route(req: IncomingMessage, res: ServerResponse): void;
}

/** The chat checker's settings: a reload that keeps them keeps its worker threads. */
const checkerSettings = (config: Config): string => `${config.rateLimits.defaultCompletionTokens} ${config.metering.forceStreamUsage}`;

/** Builds the config-bound parts; `previous` lends what a reload did not change (the chat checker's workers). */
export async function buildLive(config: Config, services: Services, previous?: Live): Promise<Live> {
  const authenticator = await createAuthenticator(config, services.runtimeKeys);
  const prices = createPriceBook(config.metering.prices);
  const upstreams: Record<UpstreamName, Upstream> = {
    service: createUpstream('service', config.upstreams.service),
    inference: createUpstream('inference', config.upstreams.inference),
  };
  const chatChecker =
    previous && checkerSettings(previous.config) === checkerSettings(config)
      ? previous.chatChecker
      : createChatBodyChecker({ defaultCompletionTokens: config.rateLimits.defaultCompletionTokens, forceStreamUsage: config.metering.forceStreamUsage });
  const policy = ownershipPolicy(config);
  const ownership = policy.enabled ? new OwnershipGuard(policy, services.ownership, services.metrics) : undefined;
  const v1 = createV1Handler({ ...services, config, authenticator, upstreams, prices, chatChecker, ownership });
  return {
    config,
    authenticator,
    prices,
    upstreams,
    chatChecker,
    v1,
    metricsHandler: createMetricsEndpoint(services.metrics, config.metrics.bearerToken),
    route(req, res) {
      v1.handle(req, res, resolveRoute(services.routes, req.method ?? 'GET', req.url ?? '/'));
    },
  };
}

/**
 * Lets go of a configuration's parts once its requests are over: its upstream pools close when
 * their last request ends (no connection is cut), its chat checker when no newer one uses it.
 */
export async function retireLive(retired: Live, successor: Live | undefined): Promise<void> {
  await retired.v1.idle();
  for (const upstream of Object.values(retired.upstreams)) upstream.close();
  if (successor?.chatChecker !== retired.chatChecker) await retired.chatChecker.close();
}
