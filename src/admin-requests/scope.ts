import type { RequestHandler, Response } from 'express';
import type { AdminPrincipal } from '../auth/index.js';
import { errors, type GatewayError } from '../errors.js';

/** The roles an admin key can have (SPEC 16). */
export type AdminRole = 'admin' | 'viewer' | 'team-admin';

/**
 * What one role may do on one route (SPEC 16):
 * - `all`: the route on every team's data;
 * - `own-team`: the route on its own team's data only — lists filtered to it, another team's
 *   named record 404, a key never moved to another team nor given limits above the team's;
 * - `none`: 403 `insufficient_role`, naming the role.
 */
export type RoleAccess = 'all' | 'own-team' | 'none';

/** What `authorize` reads of an admin route: its method and path (for the 403's words) and what each role may do. */
export interface RouteAccess {
  readonly method: string;
  readonly path: string;
  readonly access: Readonly<Record<AdminRole, RoleAccess>>;
}

/** The admin key behind this request (set by requireAdmin). */
export function adminOf(res: Response): AdminPrincipal {
  return res.locals.admin as AdminPrincipal;
}

/**
 * The one team this request may see and change, or undefined for every team: what the route's
 * `access` granted the caller's role (`own-team`: its team). Handlers filter by it; they never
 * look at the role.
 */
export function teamScopeOf(res: Response): string | undefined {
  return res.locals.teamScope as string | undefined;
}

/** 403 insufficient_role, naming the role and what it may not do. */
export function insufficientRole(role: string, what: string): GatewayError {
  return errors.insufficientRole(role, what);
}

/**
 * Enforces a route's `access` declaration (SPEC 16) for the caller's role, in one place for
 * every admin route: `none` is 403 insufficient_role, `own-team` narrows the request to the
 * caller's team (teamScopeOf), `all` lets it through unchanged.
 */
export function authorize(spec: RouteAccess): RequestHandler {
  return (_req, res, next) => {
    const admin = adminOf(res);
    const access = spec.access[admin.role];
    if (access === 'none') return next(insufficientRole(admin.role, `call ${spec.method} ${spec.path}`));
    if (access === 'own-team') res.locals.teamScope = admin.team ?? '';
    next();
  };
}

/** No team is named '': a filter by it finds nothing. */
const NO_TEAM = '';

/**
 * The team filter of a read, narrowed to the caller's scope: its own team whether or not it
 * names one, and nothing at all when it names another (that team's rows are invisible to it).
 */
export function narrowedTeam(res: Response, asked: string | undefined): string | undefined {
  const scope = teamScopeOf(res);
  if (scope === undefined) return asked;
  return asked === undefined || asked === scope ? scope : NO_TEAM;
}
