import type { RequestHandler } from 'express';
import { type AdminKeyAdmin, createAdminKeyHandler, getAdminKeyHandler, listAdminKeysHandler, revokeAdminKeyHandler, rotateAdminKeyHandler, updateAdminKeyHandler } from '../admin-keys/index.js';
import { createKeyHandler, getKeyHandler, type KeyAdmin, listKeysHandler, revokeKeyHandler, rotateKeyHandler, updateKeyHandler } from '../keys/index.js';
import type { ConfigStatus } from '../config/index.js';
import type { Ledger } from '../metering/index.js';
import type { OwnershipRegistry } from '../ownership/index.js';
import type { StoreHandle } from '../store/index.js';
import { createTeamHandler, deleteTeamHandler, getTeamHandler, listTeamsHandler, type TeamAdmin, updateTeamHandler } from '../teams/index.js';
import { listAuditHandler, type AuditAction, type AuditTrail } from './audit.js';
import { configStatusHandler, reloadHandler, type Reload } from './config-handlers.js';
import type { ModelAccess } from '../models/index.js';
import { modelsHandler, type ModelRoutingSource } from './models.js';
import { listNotificationsHandler, retryNotificationHandler, testNotificationHandler } from './notifications.js';
import type { Outbox } from '../outbox/index.js';
import { overviewHandler } from './overview.js';
import { assignResourceHandler, listResourcesHandler, releaseResourceHandler } from './resources.js';
import { ledgerRowsHandler, usageHandler } from './usage.js';

import type { AdminRole, RoleAccess } from '../admin-requests/index.js';

export type { AdminRole, RoleAccess };

/** How an admin write is audited (SPEC 12.3: every one is, failed ones included). */
export interface AdminWrite {
  /** What the audit log records it as. */
  readonly action: AuditAction;
  /**
   * Who records it: the app's audit hook once the answer is sent (`hook`), or the operation
   * itself (`operation`: a reload, which SIGHUP also triggers and which is audited either way).
   */
  readonly recordedBy: 'hook' | 'operation';
}

/** Everything an admin handler may be built from; each factory takes the part it needs. */
export interface AdminRouteDeps {
  readonly keys: KeyAdmin;
  readonly teams: TeamAdmin;
  readonly adminKeys: AdminKeyAdmin;
  /** `teams.require`: a key must name a team that has a record. */
  readonly teamsRequired: () => boolean;
  /** The running configuration's models rule (SPEC 21). */
  readonly models: () => ModelAccess;
  /** The running configuration's model routing and its upstreams' health (SPEC 22). */
  readonly modelRouting: () => ModelRoutingSource;
  readonly trail: AuditTrail;
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  readonly registry: OwnershipRegistry;
  /** The price currency of the current configuration. */
  readonly currency: () => string;
  readonly reload: Reload;
  readonly configStatus: ConfigStatus;
  /** The notification outbox (SPEC 24). */
  readonly notifications: Outbox;
}

/**
 * An admin route's policy, as data: the operations app is built by walking these entries and
 * has no per-route code besides the handler. Adding an admin route is an entry in ADMIN_ROUTES
 * (and its handler); a new behaviour for every route is a field here and the code that reads it.
 */
export interface AdminRouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * The Express path, `:name` for a parameter (percent-decoded; a bad escape is 400 invalid_path).
   * A wrong method on it is 405 naming this path, `Allow` listing the methods of its entries in
   * table order — answered before any key is asked for.
   */
  readonly path: string;
  /** Whether the body is read as JSON (≤ 64 KB, any JSON value) before the handler; otherwise it is not read. */
  readonly body: 'json' | 'none';
  /** A write and how it is audited; null for a read (nothing recorded). */
  readonly write: AdminWrite | null;
  /** What each role may do here (SPEC 16), enforced for every entry by `authorize` (admin-requests/scope.ts). */
  readonly access: Readonly<Record<AdminRole, RoleAccess>>;
  /** Builds the handler once, when the app is built; it throws or passes a GatewayError to fail. */
  readonly handler: (deps: AdminRouteDeps) => RequestHandler;
}

/** A read: a viewer sees every team's data, a team-admin its own team's (its usage, ledger rows, keys, resources, audit entries). */
const READ = { admin: 'all', viewer: 'all', 'team-admin': 'own-team' } as const;
/** A change to keys: a team-admin may make it on its own team's keys; a viewer may not. */
const TEAM_KEY_WRITE = { admin: 'all', viewer: 'none', 'team-admin': 'own-team' } as const;
/** Not team data: every team-wide role reads it, a team-admin does not. */
const GLOBAL_READ = { admin: 'all', viewer: 'all', 'team-admin': 'none' } as const;
/** For `admin` keys only. */
const ADMIN_ONLY = { admin: 'all', viewer: 'none', 'team-admin': 'none' } as const;

const audit = (action: AuditAction): AdminWrite => ({ action, recordedBy: 'hook' });

/** The admin API of SPEC 7, 12, 13.3, 14.2, 16 and 17 (the console's reads). */
export const ADMIN_ROUTES: readonly AdminRouteSpec[] = [
  { method: 'GET', path: '/admin/usage', body: 'none', write: null, access: READ, handler: usageHandler },
  { method: 'GET', path: '/admin/usage/requests', body: 'none', write: null, access: READ, handler: ledgerRowsHandler },
  { method: 'GET', path: '/admin/keys', body: 'none', write: null, access: READ, handler: listKeysHandler },
  { method: 'POST', path: '/admin/keys', body: 'json', write: audit('key.create'), access: TEAM_KEY_WRITE, handler: createKeyHandler },
  { method: 'GET', path: '/admin/keys/:id', body: 'none', write: null, access: READ, handler: getKeyHandler },
  { method: 'PATCH', path: '/admin/keys/:id', body: 'json', write: audit('key.update'), access: TEAM_KEY_WRITE, handler: updateKeyHandler },
  { method: 'DELETE', path: '/admin/keys/:id', body: 'none', write: audit('key.revoke'), access: TEAM_KEY_WRITE, handler: revokeKeyHandler },
  { method: 'POST', path: '/admin/keys/:id/rotate', body: 'json', write: audit('key.rotate'), access: TEAM_KEY_WRITE, handler: rotateKeyHandler },
  { method: 'POST', path: '/admin/teams', body: 'json', write: audit('team.create'), access: ADMIN_ONLY, handler: createTeamHandler },
  { method: 'GET', path: '/admin/teams', body: 'none', write: null, access: READ, handler: listTeamsHandler },
  { method: 'GET', path: '/admin/teams/:id', body: 'none', write: null, access: READ, handler: getTeamHandler },
  { method: 'PATCH', path: '/admin/teams/:id', body: 'json', write: audit('team.update'), access: ADMIN_ONLY, handler: updateTeamHandler },
  { method: 'DELETE', path: '/admin/teams/:id', body: 'none', write: audit('team.delete'), access: ADMIN_ONLY, handler: deleteTeamHandler },
  { method: 'POST', path: '/admin/admin-keys', body: 'json', write: audit('admin_key.create'), access: ADMIN_ONLY, handler: createAdminKeyHandler },
  { method: 'GET', path: '/admin/admin-keys', body: 'none', write: null, access: ADMIN_ONLY, handler: listAdminKeysHandler },
  { method: 'GET', path: '/admin/admin-keys/:id', body: 'none', write: null, access: ADMIN_ONLY, handler: getAdminKeyHandler },
  { method: 'PATCH', path: '/admin/admin-keys/:id', body: 'json', write: audit('admin_key.update'), access: ADMIN_ONLY, handler: updateAdminKeyHandler },
  { method: 'DELETE', path: '/admin/admin-keys/:id', body: 'none', write: audit('admin_key.revoke'), access: ADMIN_ONLY, handler: revokeAdminKeyHandler },
  { method: 'POST', path: '/admin/admin-keys/:id/rotate', body: 'json', write: audit('admin_key.rotate'), access: ADMIN_ONLY, handler: rotateAdminKeyHandler },
  { method: 'GET', path: '/admin/audit', body: 'none', write: null, access: READ, handler: listAuditHandler },
  { method: 'GET', path: '/admin/resources', body: 'none', write: null, access: READ, handler: listResourcesHandler },
  { method: 'PUT', path: '/admin/resources/:kind/:id', body: 'json', write: audit('resource.assign'), access: ADMIN_ONLY, handler: assignResourceHandler },
  { method: 'DELETE', path: '/admin/resources/:kind/:id', body: 'none', write: audit('resource.release'), access: ADMIN_ONLY, handler: releaseResourceHandler },
  // The reload records itself (SIGHUP reloads are audited too); its body is not read.
  { method: 'GET', path: '/admin/models', body: 'none', write: null, access: READ, handler: modelsHandler },
  { method: 'GET', path: '/admin/overview', body: 'none', write: null, access: READ, handler: overviewHandler },
  { method: 'GET', path: '/admin/notifications', body: 'none', write: null, access: READ, handler: listNotificationsHandler },
  { method: 'POST', path: '/admin/notifications/test', body: 'none', write: audit('notification.test'), access: ADMIN_ONLY, handler: testNotificationHandler },
  { method: 'POST', path: '/admin/notifications/:id/retry', body: 'none', write: audit('notification.retry'), access: TEAM_KEY_WRITE, handler: retryNotificationHandler },
  { method: 'GET', path: '/admin/config', body: 'none', write: null, access: GLOBAL_READ, handler: configStatusHandler },
  { method: 'POST', path: '/admin/config/reload', body: 'none', write: { action: 'config.reload', recordedBy: 'operation' }, access: ADMIN_ONLY, handler: reloadHandler },
];

/** The table's entries grouped by path, in table order: one Express route each, its methods the `Allow` of a 405. */
export function adminPaths(routes: readonly AdminRouteSpec[] = ADMIN_ROUTES): ReadonlyMap<string, readonly AdminRouteSpec[]> {
  const paths = new Map<string, AdminRouteSpec[]>();
  for (const route of routes) paths.set(route.path, [...(paths.get(route.path) ?? []), route]);
  return paths;
}
