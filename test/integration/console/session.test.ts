import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { metricValue, startGateway, tempDatabasePath, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

/** SPEC 17 sessions, on each database: what the console signs in with and what the cookie may do. */

const VIEWER = 'tg-test-viewer-key-cccccccccccccccccc';
const LEAD = 'tg-test-team-a-lead-dddddddddddddddd';
const admin = { authorization: bearer(KEYS.admin) };
const DAY = new Date().toISOString().slice(0, 10);
const COOKIE = /^tollgate_session=([A-Za-z0-9_-]{43}); Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=28800$/;
const CLEARED = 'tollgate_session=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0';
const unauthorized = { error: { message: 'Incorrect API key provided.', type: 'authentication_error', param: null, code: 'invalid_api_key' } };
const noSession = (message: string) => ({ error: { message, type: 'authentication_error', param: null, code: 'invalid_api_key' } });
const csrfRefusal = {
  error: {
    message: "A write signed in through a console session must send the session's csrfToken as the x-csrf-token header.",
    type: 'permission_error',
    param: null,
    code: 'csrf_token_invalid',
  },
};

interface Session {
  readonly cookie: string;
  readonly csrf: string;
  readonly body: Record<string, unknown>;
  /** The sign-in's x-request-id (its audit entry's). */
  readonly requestId: string;
}

async function signIn(url: string, key: string): Promise<Session> {
  const res = await request(url).post('/admin/session').send({ key });
  expect(res.status).toBe(200);
  const setCookie = res.headers['set-cookie'] as unknown as string[];
  expect(setCookie).toHaveLength(1);
  const token = COOKIE.exec(setCookie[0]!)?.[1];
  expect(token).toBeDefined();
  return { cookie: `tollgate_session=${token}`, csrf: res.body.csrfToken as string, body: res.body as Record<string, unknown>, requestId: res.headers['x-request-id'] as string };
}

const DATABASES = {
  sqlite: async () => ({ settings: { path: tempDatabasePath() }, drop: async () => undefined }),
  postgres: async () => {
    const database: TestDatabase = await createTestDatabase();
    return { settings: { url: database.url, refreshIntervalMs: 60_000 }, drop: () => database.drop() };
  },
} as const;

describe.each(Object.keys(DATABASES) as Array<keyof typeof DATABASES>)('console sessions on %s', (kind) => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let drop: () => Promise<unknown>;

  beforeAll(async () => {
    const database = await DATABASES[kind]();
    drop = database.drop;
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    gw = await startGateway(
      testConfig(
        { service: service.url, inference: inference.url },
        {
          database: database.settings,
          server: { trustProxy: true },
          auth: {
            keys: KEY_ENTRIES,
            admin: {
              keys: [...ADMIN_ENTRIES, { id: 'finance', sha256: digest(VIEWER), role: 'viewer' }, { id: 'team-a-lead', sha256: digest(LEAD), role: 'team-admin', team: 'team-a' }],
            },
          },
          teams: [{ id: 'team-a' }, { id: 'team-b' }],
        },
      ),
    );
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
    await drop();
  });

  it('signs in with an admin key: an HttpOnly SameSite=Strict cookie of 8 hours for /admin, the role, a CSRF token; GET answers the same', async () => {
    const before = Date.now();
    const session = await signIn(gw.url, KEYS.admin);
    expect(session.body).toEqual({ role: 'admin', team: null, keyId: 'ops', csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String) });
    const expiresAt = Date.parse(session.body.expiresAt as string);
    expect(expiresAt - before).toBeGreaterThanOrEqual(8 * 3600 * 1000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(8 * 3600 * 1000);
    const again = await request(gw.url).get('/admin/session').set('cookie', session.cookie);
    expect([again.status, again.body]).toEqual([200, session.body]);
    expect(JSON.stringify(again.body)).not.toContain(KEYS.admin);
  });

  it('adds Secure when the request came over HTTPS through the trusted proxy', async () => {
    const res = await request(gw.url).post('/admin/session').set('x-forwarded-proto', 'https').send({ key: KEYS.admin });
    expect(res.status).toBe(200);
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^tollgate_session=[A-Za-z0-9_-]{43}; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=28800; Secure$/);
  });

  it('refuses a bad key as the admin API does, a /v1 key 403, a body without a key 400 param "key"; sets no cookie', async () => {
    const bad = await request(gw.url).post('/admin/session').set('x-forwarded-for', '198.51.100.1').send({ key: 'tg-guessed-0000' });
    expect([bad.status, bad.headers['www-authenticate'], bad.headers['set-cookie'], bad.body]).toEqual([401, 'Bearer', undefined, unauthorized]);
    const v1 = await request(gw.url).post('/admin/session').send({ key: KEYS.teamA });
    expect([v1.status, v1.body.error.code, v1.headers['set-cookie']]).toEqual([403, 'admin_required', undefined]);
    for (const body of [{}, { key: '' }, { key: 7 }, [KEYS.admin], 'x', null]) {
      const res = await request(gw.url).post('/admin/session').send(JSON.stringify(body)).set('content-type', 'application/json');
      expect([res.status, res.body]).toEqual([
        400,
        { error: { message: 'The body must be a JSON object whose "key" is the admin key to sign in with.', type: 'invalid_request_error', param: 'key', code: 'invalid_request' } },
      ]);
    }
    const none = await request(gw.url).get('/admin/session');
    expect([none.status, none.body]).toEqual([401, noSession('No console session: sign in with POST /admin/session.')]);
    const wrong = await request(gw.url).put('/admin/session').send({});
    expect([wrong.status, wrong.headers.allow]).toEqual([405, 'POST, GET, DELETE']);
  });

  it('makes the cookie an admin credential: reads as with the bearer key, writes only with the x-csrf-token', async () => {
    const session = await signIn(gw.url, KEYS.admin);
    const byCookie = await request(gw.url).get('/admin/keys').set('cookie', session.cookie);
    const byBearer = await request(gw.url).get('/admin/keys').set(admin);
    expect([byCookie.status, byCookie.body]).toEqual([200, byBearer.body]);

    const noToken = await request(gw.url).post('/admin/keys').set('cookie', session.cookie).send({ team: 'team-a' });
    expect([noToken.status, noToken.body]).toEqual([403, csrfRefusal]);
    const otherToken = await request(gw.url).post('/admin/keys').set('cookie', session.cookie).set('x-csrf-token', `${session.csrf.slice(1)}x`).send({ team: 'team-a' });
    expect([otherToken.status, otherToken.body]).toEqual([403, csrfRefusal]);
    const withToken = await request(gw.url).post('/admin/keys').set('cookie', session.cookie).set('x-csrf-token', session.csrf).send({ team: 'team-a' });
    expect(withToken.status).toBe(201);
    const bearerWrite = await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-a' });
    expect(bearerWrite.status).toBe(201);

    const audit = await request(gw.url).get(`/admin/audit?from=${DAY}&to=${DAY}&actor=ops`).set(admin);
    const mine = (audit.body.data as Array<Record<string, unknown>>).map(({ action, result, actorRole }) => [action, result, actorRole]);
    expect(mine).toEqual(expect.arrayContaining([['session.create', 'ok', 'admin'], ['key.create', 'csrf_token_invalid', 'admin'], ['key.create', 'ok', 'admin']]));
  });

  it('counts a refused sign-in and a request without a session as auth failures; a key with a blank in it is simply unknown', async () => {
    const failures = (reason: string): Promise<number> => metricValue(gw.url, `tollgate_auth_failures_total{reason="${reason}"}`);
    const [unknownBefore, sessionBefore] = [await failures('unknown_key'), await failures('session')];
    for (const key of [`${KEYS.admin} `, `Bearer ${KEYS.admin}`, 'tg guessed']) {
      const res = await request(gw.url).post('/admin/session').set('x-forwarded-for', '198.51.100.2').send({ key });
      expect([res.status, res.headers['set-cookie'], res.body]).toEqual([401, undefined, unauthorized]);
    }
    expect((await request(gw.url).get('/admin/session')).status).toBe(401);
    expect([await failures('unknown_key'), await failures('session')]).toEqual([unknownBefore + 3, sessionBefore + 1]);
  });

  it('takes a bearer key sent beside a session cookie as the credential: the key’s role counts, and a bad key is 401 whatever the cookie', async () => {
    const session = await signIn(gw.url, KEYS.admin);
    const asViewer = await request(gw.url).get('/admin/admin-keys').set('cookie', session.cookie).set('authorization', bearer(VIEWER));
    expect([asViewer.status, asViewer.body.error.code]).toEqual([403, 'insufficient_role']);
    const badKey = await request(gw.url).get('/admin/keys').set('cookie', session.cookie).set('authorization', bearer('sk-nobody'));
    expect([badKey.status, badKey.body]).toEqual([401, unauthorized]);
  });

  it('gives a viewer and a team-admin through the cookie exactly what their keys get', async () => {
    const viewer = await signIn(gw.url, VIEWER);
    expect(viewer.body).toMatchObject({ role: 'viewer', team: null, keyId: 'finance' });
    expect((await request(gw.url).get('/admin/teams').set('cookie', viewer.cookie)).status).toBe(200);
    const write = await request(gw.url).post('/admin/keys').set('cookie', viewer.cookie).set('x-csrf-token', viewer.csrf).send({ team: 'team-a' });
    expect([write.status, write.body.error.code]).toEqual([403, 'insufficient_role']);
    expect((await request(gw.url).get('/admin/admin-keys').set('cookie', viewer.cookie)).status).toBe(403);

    const lead = await signIn(gw.url, LEAD);
    expect(lead.body).toMatchObject({ role: 'team-admin', team: 'team-a', keyId: 'team-a-lead' });
    const teams = await request(gw.url).get('/admin/teams').set('cookie', lead.cookie);
    expect((teams.body.data as Array<{ id: string }>).map((t) => t.id)).toEqual(['team-a']);
    const other = await request(gw.url).get('/admin/keys/team-b-bot').set('cookie', lead.cookie);
    expect([other.status, other.body.error.code]).toEqual([404, 'key_not_found']);
    const own = await request(gw.url).post('/admin/keys').set('cookie', lead.cookie).set('x-csrf-token', lead.csrf).send({ team: 'team-a' });
    expect(own.status).toBe(201);
  });

  it('signs out: 403 without the token, then 204 clearing the cookie, and the session is dead server-side', async () => {
    const session = await signIn(gw.url, KEYS.admin);
    const refused = await request(gw.url).delete('/admin/session').set('cookie', session.cookie);
    expect([refused.status, refused.body]).toEqual([403, csrfRefusal]);
    const out = await request(gw.url).delete('/admin/session').set('cookie', session.cookie).set('x-csrf-token', session.csrf);
    expect([out.status, out.headers['set-cookie'], out.text]).toEqual([204, [CLEARED], '']);
    const replayed = await request(gw.url).get('/admin/keys').set('cookie', session.cookie);
    expect([replayed.status, replayed.body]).toEqual([401, noSession('No console session: it expired or was signed out; sign in again.')]);
    expect((await request(gw.url).get('/admin/session').set('cookie', session.cookie)).status).toBe(401);
    const twice = await request(gw.url).delete('/admin/session').set('cookie', session.cookie);
    expect([twice.status, twice.headers['set-cookie']]).toEqual([204, [CLEARED]]);
    const audit = await request(gw.url).get(`/admin/audit?from=${DAY}&to=${DAY}&action=session.delete`).set(admin);
    expect((audit.body.data as Array<Record<string, unknown>>).map(({ actor, target, result, requestId }) => [actor, target, result, requestId])).toEqual([
      ['ops', 'ops', 'ok', out.headers['x-request-id']],
    ]);
    const created = await request(gw.url).get(`/admin/audit?from=${DAY}&to=${DAY}&action=session.create`).set(admin);
    expect((created.body.data as Array<Record<string, unknown>>).map((entry) => entry.requestId)).toContain(session.requestId);
  });

  it('answers a sign-out from a throttled address 429, and the session lives on', async () => {
    const session = await signIn(gw.url, KEYS.admin);
    const address = '198.51.100.77';
    for (let i = 0; i < 30; i++) {
      expect((await request(gw.url).post('/admin/session').set('x-forwarded-for', address).send({ key: 'tg-guessed-0000' })).status).toBe(401);
    }
    const out = await request(gw.url).delete('/admin/session').set('x-forwarded-for', address).set('cookie', session.cookie).set('x-csrf-token', session.csrf);
    expect([out.status, out.body.error.code, out.headers['set-cookie']]).toEqual([429, 'too_many_auth_failures', undefined]);
    const still = await request(gw.url).get('/admin/session').set('cookie', session.cookie);
    expect([still.status, still.body]).toEqual([200, session.body]);
  });

  it('ends a session the moment its admin key is disabled or revoked', async () => {
    const made = await request(gw.url).post('/admin/admin-keys').set(admin).send({ role: 'viewer' });
    const id = made.body.id as string;
    const session = await signIn(gw.url, made.body.key as string);
    expect((await request(gw.url).get('/admin/keys').set('cookie', session.cookie)).status).toBe(200);

    expect((await request(gw.url).patch(`/admin/admin-keys/${id}`).set(admin).send({ disabled: true })).status).toBe(200);
    const disabled = await request(gw.url).get('/admin/keys').set('cookie', session.cookie);
    expect([disabled.status, disabled.body]).toEqual([401, noSession('The admin key of this console session is disabled.')]);
    expect((await request(gw.url).patch(`/admin/admin-keys/${id}`).set(admin).send({ disabled: false })).status).toBe(200);
    expect((await request(gw.url).get('/admin/session').set('cookie', session.cookie)).status).toBe(200);

    expect((await request(gw.url).delete(`/admin/admin-keys/${id}`).set(admin)).status).toBe(204);
    const revoked = await request(gw.url).get('/admin/session').set('cookie', session.cookie);
    expect([revoked.status, revoked.body]).toEqual([401, noSession('The admin key of this console session has been revoked; sign in again.')]);
  });
});
