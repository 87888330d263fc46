import { describe, expect, it } from 'vitest';
import { ADMIN_ROUTES, adminPaths } from '../../../src/admin/index.js';

const name = (route: (typeof ADMIN_ROUTES)[number]): string => `${route.method} ${route.path}`;

describe('ADMIN_ROUTES', () => {
  it('declares each method and path once', () => {
    const names = ADMIN_ROUTES.map(name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('audits every write and only writes: each non-GET route names its own audit action (SPEC 12.3)', () => {
    for (const route of ADMIN_ROUTES) expect([name(route), route.write !== null]).toEqual([name(route), route.method !== 'GET']);
    const actions = ADMIN_ROUTES.flatMap((route) => (route.write ? [route.write.action] : []));
    expect(new Set(actions).size).toBe(actions.length);
  });

  it('groups the entries by path in table order: the Allow of a 405', () => {
    const allow = [...adminPaths()].map(([path, routes]) => [path, routes.map((route) => route.method).join(', ')]);
    expect(allow).toEqual([
      ['/admin/usage', 'GET'],
      ['/admin/usage/requests', 'GET'],
      ['/admin/keys', 'GET, POST'],
      ['/admin/keys/:id', 'GET, PATCH, DELETE'],
      ['/admin/keys/:id/rotate', 'POST'],
      ['/admin/teams', 'POST, GET'],
      ['/admin/teams/:id', 'GET, PATCH, DELETE'],
      ['/admin/admin-keys', 'POST, GET'],
      ['/admin/admin-keys/:id', 'GET, PATCH, DELETE'],
      ['/admin/admin-keys/:id/rotate', 'POST'],
      ['/admin/audit', 'GET'],
      ['/admin/resources', 'GET'],
      ['/admin/resources/:kind/:id', 'PUT, DELETE'],
      ['/admin/models', 'GET'],
      ['/admin/overview', 'GET'],
      ['/admin/notifications', 'GET'],
      ['/admin/notifications/test', 'POST'],
      ['/admin/notifications/:id/retry', 'POST'],
      ['/admin/config', 'GET'],
      ['/admin/config/reload', 'POST'],
    ]);
  });

  // SPEC 16: admin everything; viewer every GET; team-admin its own team's keys (all of 12.1) and
  // reads of its usage, ledger rows, resources and audit entries; nothing else.
  it('declares what each role may do on each route, as SPEC 16 says', () => {
    const table = ADMIN_ROUTES.map((route) => [name(route), route.access.admin, route.access.viewer, route.access['team-admin']]);
    expect(table).toEqual([
      ['GET /admin/usage', 'all', 'all', 'own-team'],
      ['GET /admin/usage/requests', 'all', 'all', 'own-team'],
      ['GET /admin/keys', 'all', 'all', 'own-team'],
      ['POST /admin/keys', 'all', 'none', 'own-team'],
      ['GET /admin/keys/:id', 'all', 'all', 'own-team'],
      ['PATCH /admin/keys/:id', 'all', 'none', 'own-team'],
      ['DELETE /admin/keys/:id', 'all', 'none', 'own-team'],
      ['POST /admin/keys/:id/rotate', 'all', 'none', 'own-team'],
      ['POST /admin/teams', 'all', 'none', 'none'],
      ['GET /admin/teams', 'all', 'all', 'own-team'],
      ['GET /admin/teams/:id', 'all', 'all', 'own-team'],
      ['PATCH /admin/teams/:id', 'all', 'none', 'none'],
      ['DELETE /admin/teams/:id', 'all', 'none', 'none'],
      ['POST /admin/admin-keys', 'all', 'none', 'none'],
      ['GET /admin/admin-keys', 'all', 'none', 'none'],
      ['GET /admin/admin-keys/:id', 'all', 'none', 'none'],
      ['PATCH /admin/admin-keys/:id', 'all', 'none', 'none'],
      ['DELETE /admin/admin-keys/:id', 'all', 'none', 'none'],
      ['POST /admin/admin-keys/:id/rotate', 'all', 'none', 'none'],
      ['GET /admin/audit', 'all', 'all', 'own-team'],
      ['GET /admin/resources', 'all', 'all', 'own-team'],
      ['PUT /admin/resources/:kind/:id', 'all', 'none', 'none'],
      ['DELETE /admin/resources/:kind/:id', 'all', 'none', 'none'],
      ['GET /admin/models', 'all', 'all', 'own-team'],
      ['GET /admin/overview', 'all', 'all', 'own-team'],
      // SPEC 24: deliveries are read like usage; a test send is the admin's; a team-admin retries its team's.
      ['GET /admin/notifications', 'all', 'all', 'own-team'],
      ['POST /admin/notifications/test', 'all', 'none', 'none'],
      ['POST /admin/notifications/:id/retry', 'all', 'none', 'own-team'],
      // The running configuration is not team data; a viewer reads every GET (SPEC 16).
      ['GET /admin/config', 'all', 'all', 'none'],
      ['POST /admin/config/reload', 'all', 'none', 'none'],
    ]);
  });

  it('never lets a viewer write', () => {
    for (const route of ADMIN_ROUTES.filter((r) => r.write !== null)) expect([name(route), route.access.viewer]).toEqual([name(route), 'none']);
  });
});
