import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const admin = { authorization: bearer(KEYS.admin) };
const SECRET = /^tg-[A-Za-z0-9_-]{32}$/;
const ADMIN_KEY_ID = /^adm-[0-9a-f]{16}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const invalid = (param: string, message: string) => ({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });

/** SPEC 16 on one instance (the embedded SQLite store): `/admin/admin-keys`, what each call answers, and that the keys work. */
describe('admin keys through the admin API', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const post = (url: string, body: unknown) => request(stack.gw.url).post(url).set(admin).send(body as object);
  const patch = (id: string, body: unknown) => request(stack.gw.url).patch(`/admin/admin-keys/${id}`).set(admin).send(body as object);
  const teamsAs = (key: string) => request(stack.gw.url).get('/admin/teams').set('authorization', bearer(key));

  it('creates a team-admin key: 201 with the record and the secret, shown this once; it works at once, for its team only', async () => {
    const res = await post('/admin/admin-keys', { role: 'team-admin', team: 'team-a', description: 'lead' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(ADMIN_KEY_ID),
      role: 'team-admin',
      team: 'team-a',
      description: 'lead',
      createdAt: expect.stringMatching(ISO),
      expiresAt: null,
      disabled: false,
      source: 'api',
      key: expect.stringMatching(SECRET),
    });
    const { key, ...record } = res.body as Record<string, unknown>;
    expect((await request(stack.gw.url).get(`/admin/admin-keys/${record.id as string}`).set(admin)).body).toEqual(record);
    const keys = await request(stack.gw.url).get('/admin/keys').set('authorization', bearer(key as string));
    expect(keys.status).toBe(200);
    expect(new Set((keys.body.data as Array<{ team: string }>).map((k) => k.team))).toEqual(new Set(['team-a']));
    const listed = await request(stack.gw.url).get('/admin/admin-keys').set(admin);
    expect(listed.body.object).toBe('list');
    expect(JSON.stringify(listed.body)).not.toContain(key as string);
  });

  it.each([
    ['a team-admin without a team', { role: 'team-admin' }, invalid('team', 'team: a team-admin key names its team')],
    ['a viewer with a team', { role: 'viewer', team: 'team-a' }, invalid('team', 'team: only a team-admin key names a team')],
    ['an unknown role', { role: 'owner' }, invalid('role', 'role: must be admin, viewer or team-admin')],
    ['no role', {}, invalid('role', 'role: must be admin, viewer or team-admin')],
    ['an unknown field', { role: 'viewer', sha256: 'a'.repeat(64) }, invalid('sha256', 'body: unknown field(s) "sha256"')],
  ])('refuses to create %s with 400, making nothing', async (_name, body, answer) => {
    const before = (await request(stack.gw.url).get('/admin/admin-keys').set(admin)).body.data.length as number;
    const res = await post('/admin/admin-keys', body);
    expect([res.status, res.body]).toEqual([400, answer]);
    expect((await request(stack.gw.url).get('/admin/admin-keys').set(admin)).body.data).toHaveLength(before);
  });

  it('changes a role: to viewer drops the team (a viewer reads every team), to team-admin needs one; an empty change is 400', async () => {
    const { body: created } = await post('/admin/admin-keys', { role: 'team-admin', team: 'team-b' });
    const ownTeamOnly = await teamsAs(created.key);
    expect([ownTeamOnly.status, ownTeamOnly.body.data]).toEqual([200, []]);

    const viewer = await patch(created.id, { role: 'viewer' });
    expect(viewer.status).toBe(200);
    expect(viewer.body).toMatchObject({ id: created.id, role: 'viewer', team: null });
    expect((await request(stack.gw.url).get('/admin/keys').set('authorization', bearer(created.key))).body.data.map((k: { team: string }) => k.team)).toContain('team-b');

    expect((await patch(created.id, { role: 'team-admin' })).body).toEqual(invalid('team', 'team: a team-admin key names its team'));
    expect((await patch(created.id, { role: 'viewer', team: 'team-a' })).body).toEqual(invalid('team', 'team: only a team-admin key names a team'));
    expect((await patch(created.id, {})).body).toEqual(invalid('body', 'body: name at least one field to change: role, team, description, expiresAt, disabled'));
    // A team given alone applies to the role the key has: a viewer names none.
    expect((await patch(created.id, { team: 'team-a' })).body).toEqual(invalid('team', 'team: only a team-admin key names a team'));
    expect((await patch(created.id, { role: 'team-admin', team: null })).body).toEqual(invalid('team', 'team: a team-admin key names its team'));
    expect((await request(stack.gw.url).get(`/admin/admin-keys/${created.id as string}`).set(admin)).body).toMatchObject({ role: 'viewer', team: null });

    const back = await patch(created.id, { role: 'team-admin', team: 'team-a' });
    expect(back.body).toMatchObject({ role: 'team-admin', team: 'team-a' });
    expect((await patch(created.id, { description: 'moved' })).body).toMatchObject({ role: 'team-admin', team: 'team-a', description: 'moved' });
    expect((await patch(created.id, { team: 'team-b' })).body).toMatchObject({ role: 'team-admin', team: 'team-b' });
    expect((await patch(created.id, { team: null })).body).toEqual(invalid('team', 'team: a team-admin key names its team'));
    expect((await patch(created.id, { role: 'admin' })).body).toMatchObject({ role: 'admin', team: null });
  });

  it('rotates within a day of overlap, refuses more or a fraction with 400, and revokes for good', async () => {
    const { body: created } = await post('/admin/admin-keys', { role: 'viewer' });
    expect((await post(`/admin/admin-keys/${created.id}/rotate`, { overlapSeconds: 86_401 })).body).toEqual(invalid('overlapSeconds', 'overlapSeconds: must be at most 86400 (one day)'));
    expect((await post(`/admin/admin-keys/${created.id}/rotate`, { overlapSeconds: 1.5 })).body).toEqual(invalid('overlapSeconds', 'overlapSeconds: must be a whole number of seconds'));
    expect((await teamsAs(created.key)).status).toBe(200);

    const rotated = await post(`/admin/admin-keys/${created.id}/rotate`, { overlapSeconds: 3_600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: created.id, role: 'viewer', source: 'api', key: expect.stringMatching(SECRET) });
    expect((await teamsAs(created.key)).status).toBe(200);
    expect((await teamsAs(rotated.body.key)).status).toBe(200);
    const now = await post(`/admin/admin-keys/${created.id}/rotate`, {});
    expect((await teamsAs(rotated.body.key)).status).toBe(401);

    const revoked = await request(stack.gw.url).delete(`/admin/admin-keys/${created.id}`).set(admin);
    expect([revoked.status, revoked.text]).toEqual([204, '']);
    const refused = await teamsAs(now.body.key);
    expect([refused.status, refused.body.error]).toEqual([401, { message: 'This admin key has been revoked.', type: 'authentication_error', param: null, code: 'invalid_api_key' }]);
    const gone = await request(stack.gw.url).get(`/admin/admin-keys/${created.id}`).set(admin);
    expect([gone.status, gone.body.error]).toEqual([404, { message: `No admin key with id "${created.id}".`, type: 'not_found_error', param: 'id', code: 'admin_key_not_found' }]);
  });

  it('never lets an admin key act on /v1', async () => {
    const { body: created } = await post('/admin/admin-keys', { role: 'admin' });
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(created.key));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_api_key');
  });

  it('audits every write with the actor, failed ones with their code', async () => {
    await stack.gw.gateway.settled();
    const today = utcDay();
    const res = await request(stack.gw.url).get(`/admin/audit?from=${today}&to=${today}`).set(admin);
    const seen = new Set((res.body.data as Array<{ action: string; result: string; actor: string }>).map((e) => `${e.actor} ${e.action} ${e.result}`));
    for (const entry of ['ops admin_key.create ok', 'ops admin_key.create invalid_request', 'ops admin_key.update ok', 'ops admin_key.update invalid_request', 'ops admin_key.rotate ok', 'ops admin_key.rotate invalid_request', 'ops admin_key.revoke ok']) {
      expect(seen).toContain(entry);
    }
  });
});
