import type { IncomingMessage } from 'node:http';
import { errors } from '../errors.js';
import type { Metrics } from '../observability/index.js';
import type { ModelAccess, ModelListing } from '../models/index.js';
import { readOwnerFields } from '../ownership/index.js';
import type { RouteSpec } from '../proxy/index.js';
import type { Caller, PreparedBody } from './values.js';

/** The model step (SPEC 21): throws the unknown-model 404 for a model the caller may not use. */
export type ModelCheck = (caller: Caller, body: PreparedBody, requested?: string) => void;

export interface ModelStepDeps {
  readonly access: ModelAccess;
  readonly listing: ModelListing;
  readonly metrics: Pick<Metrics, 'recordModelDenial' | 'recordOwnershipDenial'>;
}

/**
 * The route's model step, chosen once: a chat's `model`, or a body field the route names
 * (`base_model` of a model creation, a config route's `checks-model`) read as Python reads it.
 * Undefined: the route names no model.
 */
export function modelCheckFor(route: RouteSpec, deps: ModelStepDeps): ModelCheck | undefined {
  // `shown`: the name the client sent (an alias is refused under its own name, SPEC 22).
  const refuse = (caller: Caller, model: string, param: string, shown = model): void => {
    const scope = deps.access.refusal(caller, model);
    if (scope === undefined) return;
    deps.metrics.recordModelDenial(scope);
    // Another team's trained model is an ownership denial too (SPEC 13.2 counts those by kind).
    if (scope === 'ownership') deps.metrics.recordOwnershipDenial('model');
    throw param === 'model' ? errors.modelNotFound(shown) : errors.modelNotFoundIn(shown, param);
  };
  if (route.body === 'chat') return (caller, body, requested) => body.chat && refuse(caller, body.chat.model, 'model', requested);
  const field = route.checksModel;
  if (field === undefined) return undefined;
  // Worded as the ownership step words a model creation's body: whichever reads it first answers alike.
  const wording = { bodyParam: null, notAnObject: 'The body must be one JSON object.' };
  return (caller, body) => {
    if (body.raw === undefined) return;
    const value = readOwnerFields(body.raw, [field], wording).get(field);
    // A field that is absent or not a string names no model: the upstream answers for it.
    if (typeof value === 'string') refuse(caller, value, field);
  };
}

/** Whether the gateway answers this request itself: one model always; the list unless nothing is withheld from the caller (then the host's own list passes). */
export function answeredHere(route: RouteSpec, caller: Caller, access: ModelAccess, listing: ModelListing): boolean {
  return route.answeredBy === 'model' || (route.answeredBy === 'model-list' && (listing.answersEveryList || !access.isOpenTo(caller)));
}

/** The answer of a route the gateway serves itself (`answeredBy: models`): the caller's models, as JSON. */
export async function answerModels(req: IncomingMessage, caller: Caller, listing: ModelListing): Promise<Buffer> {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  return Buffer.from(JSON.stringify(await listing.answer(caller, path, req.headers.authorization)));
}
