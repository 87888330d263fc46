import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import type { AdminKeyAdmin } from './admin-key-admin.js';
import { adminKeyTeamProblem, adminRoleSchema, namePart, type ADMIN_ROLES } from '../config/index.js';
import { descriptionField, expiresAtField, onlyParams, parseBody } from '../admin-requests/index.js';

/** A body naming a role and a team (SPEC 16): a team-admin names its team, the other roles none. A body without a role is checked against the key (AdminKeyAdmin.update). */
const roleAndTeam = <T extends { role?: (typeof ADMIN_ROLES)[number] | undefined; team?: string | null | undefined }>(key: T, ctx: z.RefinementCtx): void => {
  const problem = key.role === undefined ? undefined : adminKeyTeamProblem(key.role, key.team);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['team'], message: problem });
};

const createSchema = z
  .object({ role: adminRoleSchema, team: namePart.optional(), description: descriptionField.optional(), expiresAt: expiresAtField.optional() })
  .strict()
  .superRefine(roleAndTeam);

const updateSchema = z
  .object({ role: adminRoleSchema.optional(), team: namePart.nullable().optional(), description: descriptionField.optional(), expiresAt: expiresAtField.optional(), disabled: z.boolean().optional() })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'name at least one field to change: role, team, description, expiresAt, disabled')
  .superRefine(roleAndTeam);

const rotateSchema = z
  .object({ overlapSeconds: z.number().int('must be a whole number of seconds').min(0).max(86_400, 'must be at most 86400 (one day)').default(0) })
  .strict();

const idOf = (req: Request): string => String(req.params.id);

interface Deps {
  readonly adminKeys: AdminKeyAdmin;
}

/** `POST /admin/admin-keys` (SPEC 16): 201, the record plus its secret, shown this once. */
export const createAdminKeyHandler = ({ adminKeys }: Deps): RequestHandler => async (req, res) => {
  const created = await adminKeys.create(parseBody(createSchema, req));
  res.locals.auditTarget = created.id;
  res.status(201).json(created);
};

export const listAdminKeysHandler = ({ adminKeys }: Deps): RequestHandler => (req, res) => {
  onlyParams(req.query as Record<string, unknown>, []);
  res.json({ object: 'list', data: adminKeys.list() });
};

export const getAdminKeyHandler = ({ adminKeys }: Deps): RequestHandler => (req, res) => {
  res.json(adminKeys.get(idOf(req)));
};

/** Role and team are checked again as the change leaves the key (a role changed away from team-admin drops the team). */
export const updateAdminKeyHandler = ({ adminKeys }: Deps): RequestHandler => async (req, res) => {
  res.json(await adminKeys.update(idOf(req), parseBody(updateSchema, req)));
};

export const rotateAdminKeyHandler = ({ adminKeys }: Deps): RequestHandler => async (req, res) => {
  res.json(await adminKeys.rotate(idOf(req), parseBody(rotateSchema, req).overlapSeconds));
};

export const revokeAdminKeyHandler = ({ adminKeys }: Deps): RequestHandler => async (req, res) => {
  await adminKeys.revoke(idOf(req));
  res.status(204).end();
};
