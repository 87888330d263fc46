import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { KeyAdmin } from './key-admin.js';
import { keyProjects, limitSetSchema, modelPatterns, namePart } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';
import { configuredLimits, type LimitSet } from '../limits/index.js';
import { isValidName, NAME_RULE } from '../projects/index.js';
import type { TeamAdmin } from '../teams/index.js';
import { modelListProblem, type ModelAccess } from '../models/index.js';
import { adminOf, descriptionField, expiresAtField, insufficientRole, invalidQuery, invalidRequest, onlyParams, parseBody, singleParam, teamScopeOf } from '../admin-requests/index.js';


/** What a key's creation and its update both may set. */
const keyFields = {
  projects: keyProjects.optional(),
  defaultProject: namePart.optional(),
  limits: limitSetSchema.optional(),
  models: modelPatterns.nullable().optional(),
  expiresAt: expiresAtField.optional(),
  description: descriptionField.optional(),
};

const createKeySchema = z.object({ team: namePart, ...keyFields }).strict();

const updateKeySchema = z
  .object({ ...keyFields, disabled: z.boolean().optional() })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'name at least one field to change: projects, defaultProject, limits, models, expiresAt, description, disabled');

const rotateKeySchema = z
  .object({ overlapSeconds: z.number().int('must be a whole number of seconds').min(0).max(86_400, 'must be at most 86400 (one day)').default(0) })
  .strict();

/** What the key handlers work on: the runtime keys (and the config keys, read-only), and the teams they belong to. */
export interface KeyHandlerDeps {
  readonly keys: KeyAdmin;
  readonly teams: TeamAdmin;
  readonly teamsRequired: () => boolean;
  /** The running configuration's models rule: groups to check lists against, each team's list. */
  readonly models: () => ModelAccess;
}

const idOf = (req: Request): string => String(req.params.id);

const keyNotFound = (id: string): GatewayError => errors.keyNotFound(id);

/** The key `id`, as the caller may see it: another team's key is unknown to a team-admin (404). */
function visibleKey(keys: KeyAdmin, res: Response, id: string): void {
  const scope = teamScopeOf(res);
  if (scope !== undefined && keys.get(id).team !== scope) throw keyNotFound(id);
}

/** A team-admin never gives a key limits above its team's own (SPEC 16); a limit the team does not set is not capped. */
function refuseLimitsAboveTeam(res: Response, teams: TeamAdmin, limits: LimitSet | undefined): void {
  const scope = teamScopeOf(res);
  if (scope === undefined || limits === undefined) return;
  const teamLimits = teams.limitsOf(scope) ?? {};
  for (const [name, value] of configuredLimits(limits)) {
    const cap = teamLimits[name];
    if (cap !== undefined && value > cap) throw insufficientRole(adminOf(res).role, `give a key ${name} ${value}, above its team's ${cap}`);
  }
}

/**
 * A key's model list (SPEC 21): 400 naming the entry for an unknown `@group` or an empty pattern;
 * a team-admin only narrows within its team's list (403 insufficient_role, param models). `null`
 * (no list of its own) is always within: the key then gets the default ∩ its team's list.
 */
export function refuseModelList(res: Response, access: ModelAccess, team: string, models: readonly string[] | null | undefined): void {
  if (models === undefined || models === null) return;
  const problem = modelListProblem(models, access.rules.groups, 'models');
  if (problem !== undefined) throw invalidRequest('models', problem);
  if (teamScopeOf(res) === undefined) return;
  const teamList = access.teamList(team);
  const outside = access.rules.resolve(models).find((pattern) => !teamList.covers(pattern));
  if (outside !== undefined) throw errors.modelsOutsideTeam(adminOf(res).role, outside);
}

/** `POST /admin/keys` (SPEC 12.1): 201, the record plus its secret, shown this once. */
export const createKeyHandler = ({ keys, teams, teamsRequired, models }: KeyHandlerDeps): RequestHandler => async (req, res) => {
  const body = parseBody(createKeySchema, req);
  const scope = teamScopeOf(res);
  if (scope !== undefined && body.team !== scope) throw insufficientRole(adminOf(res).role, `create a key of team "${body.team}" (only of "${scope}")`);
  if (teamsRequired() && !teams.exists(body.team)) throw invalidRequest('team', `team: no team "${body.team}" exists (teams.require is on); create it first.`);
  refuseLimitsAboveTeam(res, teams, body.limits);
  refuseModelList(res, models(), body.team, body.models);
  const created = await keys.create(body);
  res.locals.auditTarget = created.id;
  res.status(201).json(created);
};

/** `GET /admin/keys[?team=]`: API keys and config keys, never a secret or a digest. */
export const listKeysHandler = ({ keys }: KeyHandlerDeps): RequestHandler => (req, res) => {
  const query = req.query as Record<string, unknown>;
  onlyParams(query, ['team']);
  const team = singleParam(query, 'team');
  if (team !== undefined && !isValidName(team)) throw invalidQuery('team', `Query parameter "team" must be ${NAME_RULE}, got "${team}".`);
  const scope = teamScopeOf(res);
  const data = scope !== undefined && team !== undefined && team !== scope ? [] : keys.list(scope ?? team);
  res.json({ object: 'list', data });
};

/** `GET /admin/keys/{id}`: the record, or 404 key_not_found. */
export const getKeyHandler = ({ keys }: KeyHandlerDeps): RequestHandler => (req, res) => {
  visibleKey(keys, res, idOf(req));
  res.json(keys.get(idOf(req)));
};

/** `PATCH /admin/keys/{id}`: the changed record; a config key is 409 read_only_key. */
export const updateKeyHandler = ({ keys, teams, models }: KeyHandlerDeps): RequestHandler => async (req, res) => {
  visibleKey(keys, res, idOf(req));
  const changes = parseBody(updateKeySchema, req);
  refuseLimitsAboveTeam(res, teams, changes.limits);
  refuseModelList(res, models(), keys.get(idOf(req)).team, changes.models);
  res.json(await keys.update(idOf(req), changes));
};

/** `POST /admin/keys/{id}/rotate`: the record plus the new secret; the old one lasts `overlapSeconds`. */
export const rotateKeyHandler = ({ keys }: KeyHandlerDeps): RequestHandler => async (req, res) => {
  visibleKey(keys, res, idOf(req));
  const { overlapSeconds } = parseBody(rotateKeySchema, req);
  res.json(await keys.rotate(idOf(req), overlapSeconds));
};

/** `DELETE /admin/keys/{id}`: 204, revoked for good. */
export const revokeKeyHandler = ({ keys }: KeyHandlerDeps): RequestHandler => async (req, res) => {
  visibleKey(keys, res, idOf(req));
  await keys.revoke(idOf(req));
  res.status(204).end();
};
