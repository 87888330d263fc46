import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { limitSetSchema, modelPatterns, namePart } from '../config/index.js';
import { modelListProblem, type ModelAccess } from '../models/index.js';
import { teamNotFound, type TeamAdmin } from './team-admin.js';
import { descriptionField, invalidRequest, onlyParams, parseBody, teamScopeOf } from '../admin-requests/index.js';


const modelsField = modelPatterns.nullable().optional();
const createTeamSchema = z.object({ id: namePart, description: descriptionField.optional(), limits: limitSetSchema.optional(), models: modelsField }).strict();

const updateTeamSchema = z
  .object({ limits: limitSetSchema.optional(), models: modelsField, description: descriptionField.optional(), disabled: z.boolean().optional() })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'name at least one field to change: limits, models, description, disabled');

export interface TeamHandlerDeps {
  readonly teams: TeamAdmin;
  readonly models: () => ModelAccess;
}

/** A team's model list (SPEC 21): an unknown `@group` or an empty pattern is 400 naming the entry. */
function refuseBadList(access: ModelAccess, models: readonly string[] | null | undefined): void {
  if (models === undefined || models === null) return;
  const problem = modelListProblem(models, access.rules.groups, 'models');
  if (problem !== undefined) throw invalidRequest('models', problem);
}

const idOf = (req: Request): string => String(req.params.id);

/** `POST /admin/teams` (SPEC 16): 201, the team record with its (empty) spend. */
export const createTeamHandler = ({ teams, models }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  const body = parseBody(createTeamSchema, req);
  refuseBadList(models(), body.models);
  res.locals.auditTarget = body.id;
  res.status(201).json(await teams.create(body));
};

/** `GET /admin/teams`: every team with a record, with spend; a team-admin's list holds its own team only. */
export const listTeamsHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  onlyParams(req.query as Record<string, unknown>, []);
  res.json({ object: 'list', data: await teams.list(teamScopeOf(res)) });
};

/** `GET /admin/teams/{id}`: the record with spend, or 404 team_not_found (another team's, for a team-admin). */
export const getTeamHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  const id = idOf(req);
  const scope = teamScopeOf(res);
  if (scope !== undefined && scope !== id) throw teamNotFound(id);
  res.json(await teams.get(id));
};

/** `PATCH /admin/teams/{id}`: limits, description, disabled; a config team is 409 read_only_team. */
export const updateTeamHandler = ({ teams, models }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  const patch = parseBody(updateTeamSchema, req);
  refuseBadList(models(), patch.models);
  res.json(await teams.update(idOf(req), { ...patch, ...(patch.models === undefined ? {} : { models: patch.models === null ? null : [...patch.models] }) }));
};

/** `DELETE /admin/teams/{id}`: 204; 409 team_in_use while a key names it. */
export const deleteTeamHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  await teams.delete(idOf(req));
  res.status(204).end();
};
