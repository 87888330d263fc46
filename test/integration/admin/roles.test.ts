import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../../src/admin/index.js';
import { startStack } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const VIEWER = 'tg-test-viewer-key-cccccccccccccccccc';
const LEAD = 'tg-test-team-a-lead-dddddddddddddddd';
const ROLES = { admin: KEYS.admin, viewer: VIEWER, 'team-admin': LEAD } as const;
const DAY = new Date().toISOString().slice(0, 10);

/**
 * One request per admin route, on another team's data (team-b) where it names one: what each
 * role gets. SPEC 16: admin everything, viewer every GET but admin keys, a team-admin (of team-a)
 * nothing of team-b — 404 for named records, 403 insufficient_role for what its role may not do.
 */
const CASES: ReadonlyArray<{ route: string; url: string; body?: object; admin: number; viewer: number; 'team-admin': number }> = [
  { route: 'GET /admin/usage', url: `/admin/usage?from=${DAY}&to=${DAY}`, admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/usage/requests', url: `/admin/usage/requests?from=${DAY}&to=${DAY}`, admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/keys', url: '/admin/keys', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'POST /admin/keys', url: '/admin/keys', body: { team: 'team-b' }, admin: 201, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/keys/:id', url: '/admin/keys/team-b-bot', admin: 200, viewer: 200, 'team-admin': 404 },
  { route: 'PATCH /admin/keys/:id', url: '/admin/keys/team-b-bot', body: { description: 'x' }, admin: 409, viewer: 403, 'team-admin': 404 },
  { route: 'DELETE /admin/keys/:id', url: '/admin/keys/team-b-bot', admin: 409, viewer: 403, 'team-admin': 404 },
  { route: 'POST /admin/keys/:id/rotate', url: '/admin/keys/team-b-bot/rotate', body: {}, admin: 409, viewer: 403, 'team-admin': 404 },
  { route: 'POST /admin/teams', url: '/admin/teams', body: { id: 'team-b' }, admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/teams', url: '/admin/teams', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/teams/:id', url: '/admin/teams/team-b', admin: 200, viewer: 200, 'team-admin': 404 },
  { route: 'PATCH /admin/teams/:id', url: '/admin/teams/team-b', body: { disabled: true }, admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'DELETE /admin/teams/:id', url: '/admin/teams/team-b', admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'POST /admin/admin-keys', url: '/admin/admin-keys', body: { role: 'viewer' }, admin: 201, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/admin-keys', url: '/admin/admin-keys', admin: 200, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/admin-keys/:id', url: '/admin/admin-keys/ops', admin: 200, viewer: 403, 'team-admin': 403 },
  { route: 'PATCH /admin/admin-keys/:id', url: '/admin/admin-keys/ops', body: { description: 'x' }, admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'DELETE /admin/admin-keys/:id', url: '/admin/admin-keys/ops', admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'POST /admin/admin-keys/:id/rotate', url: '/admin/admin-keys/ops/rotate', body: {}, admin: 409, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/audit', url: `/admin/audit?from=${DAY}&to=${DAY}`, admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/resources', url: '/admin/resources', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'PUT /admin/resources/:kind/:id', url: '/admin/resources/model/m1', body: { team: 'team-b', project: 'p' }, admin: 200, viewer: 403, 'team-admin': 403 },
  { route: 'DELETE /admin/resources/:kind/:id', url: '/admin/resources/model/m1', admin: 204, viewer: 403, 'team-admin': 403 },
  { route: 'GET /admin/models', url: '/admin/models', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/overview', url: '/admin/overview', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'GET /admin/notifications', url: '/admin/notifications', admin: 200, viewer: 200, 'team-admin': 200 },
  { route: 'POST /admin/notifications/test', url: '/admin/notifications/test', admin: 202, viewer: 403, 'team-admin': 403 },
  { route: 'POST /admin/notifications/:id/retry', url: '/admin/notifications/nope/retry', admin: 404, viewer: 403, 'team-admin': 404 },
  { route: 'GET /admin/config', url: '/admin/config', admin: 200, viewer: 200, 'team-admin': 403 },
  { route: 'POST /admin/config/reload', url: '/admin/config/reload', admin: 400, viewer: 403, 'team-admin': 403 },
];

describe('admin roles (SPEC 16): route × role → status', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      auth: {
        keys: KEY_ENTRIES,
        admin: {
          keys: [...ADMIN_ENTRIES, { id: 'finance', sha256: digest(VIEWER), role: 'viewer' }, { id: 'team-a-lead', sha256: digest(LEAD), role: 'team-admin', team: 'team-a' }],
        },
      },
      teams: [{ id: 'team-a', limits: { rpm: 100 } }, { id: 'team-b' }],
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('covers every route of the table', () => {
    expect(CASES.map((c) => c.route)).toEqual(ADMIN_ROUTES.map((r) => `${r.method} ${r.path}`));
  });

  it('answers each role on each route as the table declares, naming the role in a 403', async () => {
    const table: string[] = [];
    for (const c of CASES) {
      const method = c.route.split(' ')[0]!.toLowerCase() as Method;
      const got: Record<string, number> = {};
      // Least powerful first: a write admin makes (201) must not turn another role's answer.
      for (const role of ['viewer', 'team-admin', 'admin'] as const) {
        const call = request(stack.gw.url)[method](c.url).set('authorization', bearer(ROLES[role]));
        const res = c.body === undefined ? await call : await call.send(c.body);
        got[role] = res.status;
        if (res.status === 403) expect([c.route, role, res.body.error.code, res.body.error.message]).toEqual([c.route, role, 'insufficient_role', expect.stringContaining(`"${role}"`)]);
      }
      table.push(`${c.route.padEnd(36)} admin ${got.admin} viewer ${got.viewer} team-admin ${got['team-admin']}`);
      expect([c.route, got]).toEqual([c.route, { viewer: c.viewer, 'team-admin': c['team-admin'], admin: c.admin }]);
    }
    console.log(table.join('\n'));
  });

  it('filters lists for a team-admin: other teams absent', async () => {
    const lead = { authorization: bearer(LEAD) };
    const keys = await request(stack.gw.url).get('/admin/keys').set(lead);
    expect(new Set(keys.body.data.map((k: { team: string }) => k.team))).toEqual(new Set(['team-a']));
    expect((await request(stack.gw.url).get('/admin/keys?team=team-b').set(lead)).body.data).toEqual([]);
    const teams = await request(stack.gw.url).get('/admin/teams').set(lead);
    expect(teams.body.data.map((t: { id: string }) => t.id)).toEqual(['team-a']);
    // Usage, ledger rows and resources: its own team whatever it asks; another team's, nothing.
    for (const path of ['/admin/usage', '/admin/usage/requests']) {
      await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamB)).expect(200);
      await stack.gw.gateway.settled();
      const all = await request(stack.gw.url).get(`${path}?from=${DAY}&to=${DAY}`).set(lead);
      const other = await request(stack.gw.url).get(`${path}?from=${DAY}&to=${DAY}&team=team-b`).set(lead);
      const asAdmin = await request(stack.gw.url).get(`${path}?from=${DAY}&to=${DAY}&team=team-b`).set({ authorization: bearer(KEYS.admin) });
      expect([path, all.body.data.filter((r: { team: string }) => r.team !== 'team-a'), other.body.data, asAdmin.body.data.length > 0]).toEqual([path, [], [], true]);
    }
    await request(stack.gw.url).put('/admin/resources/model/m-b').set({ authorization: bearer(KEYS.admin) }).send({ team: 'team-b', project: 'p' }).expect(200);
    expect((await request(stack.gw.url).get('/admin/resources').set(lead)).body.data).toEqual([]);
  });

  it('shows a team-admin its own team: its record, its keys when it names its team, a key at exactly its team\'s limit', async () => {
    const lead = { authorization: bearer(LEAD) };
    const team = await request(stack.gw.url).get('/admin/teams/team-a').set(lead);
    expect([team.status, team.body.id]).toEqual([200, 'team-a']);
    const keys = await request(stack.gw.url).get('/admin/keys?team=team-a').set(lead);
    expect(keys.body.data.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining(['team-a-bot', 'team-a-prod']));
    expect(new Set(keys.body.data.map((k: { team: string }) => k.team))).toEqual(new Set(['team-a']));
    const atCap = await request(stack.gw.url).post('/admin/keys').set(lead).send({ team: 'team-a', limits: { rpm: 100 } });
    expect([atCap.status, atCap.body.limits]).toEqual([201, { rpm: 100 }]);
    const over = await request(stack.gw.url).patch(`/admin/keys/${atCap.body.id as string}`).set(lead).send({ limits: { rpm: 101 } });
    expect([over.status, over.body.error.message]).toEqual([403, 'The admin role "team-admin" may not give a key rpm 101, above its team\'s 100.']);
    const other = await request(stack.gw.url).post('/admin/keys').set(lead).send({ team: 'team-b' });
    expect([other.status, other.body.error.message]).toEqual([403, 'The admin role "team-admin" may not create a key of team "team-b" (only of "team-a").']);
  });

  it('lets a team-admin manage its own keys, never above its team\'s limits, and audits actor id and role', async () => {
    const lead = { authorization: bearer(LEAD) };
    const created = await request(stack.gw.url).post('/admin/keys').set(lead).send({ team: 'team-a', limits: { rpm: 50 } });
    expect(created.status).toBe(201);
    const above = await request(stack.gw.url).patch(`/admin/keys/${created.body.id}`).set(lead).send({ limits: { rpm: 500 } });
    expect([above.status, above.body.error]).toEqual([
      403,
      { message: 'The admin role "team-admin" may not give a key rpm 500, above its team\'s 100.', type: 'permission_error', param: null, code: 'insufficient_role' },
    ]);
    await request(stack.gw.url).delete(`/admin/keys/${created.body.id}`).set(lead).expect(204);
    await stack.gw.gateway.settled();
    const audit = await request(stack.gw.url).get(`/admin/audit?from=${DAY}&to=${DAY}&actor=team-a-lead`).set({ authorization: bearer(KEYS.admin) });
    const rows = (audit.body.data as Array<{ actor: string; actorRole: string; action: string; target: string; result: string }>).filter((e) => e.target === created.body.id);
    expect(rows.map((e) => [e.actor, e.actorRole, e.action, e.result])).toEqual([
      ['team-a-lead', 'team-admin', 'key.create', 'ok'],
      ['team-a-lead', 'team-admin', 'key.update', 'insufficient_role'],
      ['team-a-lead', 'team-admin', 'key.revoke', 'ok'],
    ]);
  });
});
