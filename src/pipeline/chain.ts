import type { IncomingMessage } from 'node:http';
import { createResponseTap, type PriceBook, type ResponseTap } from '../metering/index.js';
import type { Reserve } from '../limits/index.js';
import type { OwnershipGuard } from '../ownership/index.js';
import type { RouteSpec } from '../proxy/index.js';
import { bodyReaderFor, type BodyReader, type BodySettings } from './body.js';
import { checkOwnership, readGuardedUpload, type AnswerRule } from './ownership.js';
import { modelCheckFor, type ModelCheck, type ModelStepDeps } from './models.js';
import type { Caller, ChatTerms, PreparedBody } from './values.js';

/** What a request other than a chat completion reserves: nothing, and token and cost limits do not apply to it. */
const NO_RESERVATION: Reserve = { estimatedTokens: 0, estimatedCostNanos: 0, spends: false };

/**
 * What one route does at each step of a request, chosen once from its spec when the gateway
 * (or a reloaded configuration) is built — Envoy AI Gateway's per-endpoint processors — so a
 * request runs its route's steps and no step asks the spec again.
 */
export interface RouteChain {
  readonly route: RouteSpec;
  /** The body step (after identify: a guarded job upload is held until its model_id is the caller's). */
  readonly readBody: (req: IncomingMessage, caller: Caller) => Promise<PreparedBody>;
  /** The ownership step: what to do with the upstream's answer, if anything (nothing where ownership is off). */
  readonly checkOwnership: (req: IncomingMessage, caller: Caller, body: PreparedBody) => Promise<AnswerRule | undefined>;
  /** The model step (SPEC 21), before the limits; undefined on a route that names no model. */
  readonly checkModel: ModelCheck | undefined;
  /** Whether the route checks ownership at all (a trace shows the step only where it does). */
  readonly ownershipChecked: boolean;
  /** What an admitted request reserves; undefined on a route that is not limited. */
  readonly reserve: ((chat: ChatTerms | undefined) => Reserve) | undefined;
  /** The metering tap for a 200 reply of a route metered by its tokens; undefined elsewhere. */
  readonly meter: (upstreamResponse: IncomingMessage, chat: ChatTerms | undefined) => ResponseTap | undefined;
}

export interface ChainDeps {
  readonly bodies: BodySettings;
  readonly prices: PriceBook;
  /** Ownership checks, when the configuration turns them on. */
  readonly ownership: OwnershipGuard | undefined;
  readonly models: ModelStepDeps;
}

const unmetered = (): undefined => undefined;

/** A chat reply's tap: usage read from its JSON or SSE body; the forced usage chunk cut out of the stream. */
const meterTokens = (upstreamResponse: IncomingMessage, chat: ChatTerms | undefined): ResponseTap =>
  createResponseTap(upstreamResponse.headers['content-type'], {
    dropUsageChunk: chat?.usageForced ?? false,
    contentEncoding: upstreamResponse.headers['content-encoding'],
  });

/** The route's body step: its spec's reader, or — a `checksBody` rule while ownership is on — the upload held for its field. */
function readerFor(route: RouteSpec, bodies: BodySettings, guard: OwnershipGuard | undefined, models: ModelStepDeps): RouteChain['readBody'] {
  const field = route.ownership?.checksBody;
  if (guard && field) return (req, caller) => readGuardedUpload(guard, req, caller, bodies, field);
  if (!guard && route.checksModel !== undefined) {
    // The model field is read only for a caller whose lists withhold something; others' uploads stream.
    const readWhole = bodyReaderFor(route, bodies, true);
    const stream = bodyReaderFor(route, bodies, false);
    return (req, caller) => (models.access.isOpenTo(caller) ? stream(req) : readWhole(req));
  }
  const read: BodyReader = bodyReaderFor(route, bodies, guard !== undefined);
  return (req) => read(req);
}

/** Builds every route's chain, keyed by its spec (the object the route table resolves to). */
export function buildRouteChains(routes: readonly RouteSpec[], deps: ChainDeps): ReadonlyMap<RouteSpec, RouteChain> {
  const reserve = (chat: ChatTerms | undefined): Reserve => {
    if (!chat) return NO_RESERVATION;
    const completion = chat.estimatedTokens - chat.promptTokens;
    const estimatedCostNanos = deps.prices.costNanos(chat.model, { prompt_tokens: chat.promptTokens, completion_tokens: completion });
    return { estimatedTokens: chat.estimatedTokens, estimatedCostNanos, spends: true };
  };
  const chains = new Map<RouteSpec, RouteChain>();
  for (const route of routes) {
    const guard = route.ownership === undefined ? undefined : deps.ownership;
    chains.set(route, {
      route,
      readBody: readerFor(route, deps.bodies, guard, deps.models),
      checkOwnership: guard ? (req, caller, body) => checkOwnership(guard, route, req, caller, body) : () => Promise.resolve(undefined),
      checkModel: modelCheckFor(route, deps.models),
      ownershipChecked: guard !== undefined,
      reserve: route.limited ? reserve : undefined,
      meter: route.metering === 'tokens' ? meterTokens : unmetered,
    });
  }
  return chains;
}
