import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { limitSetSchema, namePart } from '../config/index.js';
import { teamNotFound, type TeamAdmin } from './team-admin.js';
import { descriptionField, onlyParams, parseBody, teamScopeOf } from '../admin-requests/index.js';


const createTeamSchema = z.object({ id: namePart, description: descriptionField.optional(), limits: limitSetSchema.optional() }).strict();

const updateTeamSchema = z
  .object({ limits: limitSetSchema.optional(), description: descriptionField.optional(), disabled: z.boolean().optional() })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'name at least one field to change: limits, description, disabled');

export interface TeamHandlerDeps {
  readonly teams: TeamAdmin;
}

const idOf = (req: Request): string => String(req.params.id);

/** `POST /admin/teams` (SPEC 16): 201, the team record with its (empty) spend. */
export const createTeamHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  const body = parseBody(createTeamSchema, req);
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
export const updateTeamHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  res.json(await teams.update(idOf(req), parseBody(updateTeamSchema, req)));
};

/** `DELETE /admin/teams/{id}`: 204; 409 team_in_use while a key names it. */
export const deleteTeamHandler = ({ teams }: TeamHandlerDeps): RequestHandler => async (req, res) => {
  await teams.delete(idOf(req));
  res.status(204).end();
};
