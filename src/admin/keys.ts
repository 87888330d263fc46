import express, { type Request, type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { KeyAdmin } from '../auth/index.js';
import { keyProjects, limitSetSchema, namePart } from '../config/index.js';
import { isValidName, NAME_RULE } from '../projects/name.js';
import type { AuditAction, AuditTrail } from './audit.js';
import { invalidQuery, onlyParams, parseBody, singleParam } from './request.js';

/** An instant with its offset, stored in UTC; it must lie ahead (a key that expired on creation is a mistake). */
const expiresAt = z
  .iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z' })
  .transform((value) => new Date(value).toISOString())
  .refine((value) => Date.parse(value) > Date.now(), 'must be in the future')
  .nullable();
const description = z.string().max(1000, 'must be at most 1000 characters').nullable();

const createKeySchema = z
  .object({
    team: namePart,
    projects: keyProjects.optional(),
    defaultProject: namePart.optional(),
    limits: limitSetSchema.optional(),
    expiresAt: expiresAt.optional(),
    description: description.optional(),
  })
  .strict();

const updateKeySchema = z
  .object({
    projects: keyProjects.optional(),
    defaultProject: namePart.optional(),
    limits: limitSetSchema.optional(),
    expiresAt: expiresAt.optional(),
    description: description.optional(),
    disabled: z.boolean().optional(),
  })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'name at least one field to change: projects, defaultProject, limits, expiresAt, description, disabled');

const rotateKeySchema = z
  .object({ overlapSeconds: z.number().int('must be a whole number of seconds').min(0).max(86_400, 'must be at most 86400 (one day)').default(0) })
  .strict();

export interface AdminRouteDeps {
  readonly keys: KeyAdmin;
  readonly trail: AuditTrail;
}

/**
 * Records an admin write in the audit log once its answer is sent: who, what, on which target,
 * and `ok` or the error code it was answered with. Every write route goes through it, so no
 * write is left out, failed ones included.
 */
export function audited(trail: AuditTrail, action: AuditAction): RequestHandler {
  return (req, res, next) => {
    res.once('finish', () => {
      const target = (res.locals.auditTarget as string | undefined) ?? (req.params.id as string | undefined) ?? '';
      const result = res.statusCode < 400 ? 'ok' : ((res.locals.errorCode as string | undefined) ?? String(res.statusCode));
      trail.record(String(res.locals.adminId ?? ''), action, target, result, String(res.getHeader('x-request-id') ?? ''));
    });
    next();
  };
}

const idOf = (req: Request): string => String(req.params.id);

/** `/admin/keys` (SPEC 12.1): create, list, get, update, rotate, revoke. Admin auth runs before these. */
export function keyRoutes({ keys, trail }: AdminRouteDeps): Router {
  const router = express.Router();
  const json = express.json({ limit: '64kb', strict: false });

  router.post('/admin/keys', audited(trail, 'key.create'), json, async (req, res) => {
    const created = await keys.create(parseBody(createKeySchema, req));
    res.locals.auditTarget = created.id;
    res.status(201).json(created);
  });
  router.get('/admin/keys', (req, res) => {
    const query = req.query as Record<string, unknown>;
    onlyParams(query, ['team']);
    const team = singleParam(query, 'team');
    if (team !== undefined && !isValidName(team)) throw invalidQuery('team', `Query parameter "team" must be ${NAME_RULE}, got "${team}".`);
    res.json({ object: 'list', data: keys.list(team) });
  });
  router.get('/admin/keys/:id', (req, res) => {
    res.json(keys.get(idOf(req)));
  });
  router.patch('/admin/keys/:id', audited(trail, 'key.update'), json, async (req, res) => {
    res.json(await keys.update(idOf(req), parseBody(updateKeySchema, req)));
  });
  router.post('/admin/keys/:id/rotate', audited(trail, 'key.rotate'), json, async (req, res) => {
    const { overlapSeconds } = parseBody(rotateKeySchema, req);
    res.json(await keys.rotate(idOf(req), overlapSeconds));
  });
  router.delete('/admin/keys/:id', audited(trail, 'key.revoke'), async (req, res) => {
    await keys.revoke(idOf(req));
    res.status(204).end();
  });
  return router;
}
