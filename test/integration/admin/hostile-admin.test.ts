import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../../src/admin/index.js';
import { startStack } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const VIEWER = 'tg-test-viewer-key-cccccccccccccccccc';
const LEAD = 'tg-test-team-a-lead-dddddddddddddddd';
const DAY = new Date().toISOString().slice(0, 10);
const admin = { authorization: bearer(KEYS.admin) };
const lead = { authorization: bearer(LEAD) };
const csrfRefusal = {
  error: {
    message: "A write signed in through a console session must send the session's csrfToken as the x-csrf-token header.",
    type: 'permission_error',
    param: null,
    code: 'csrf_token_invalid',
  },
};

/** A concrete URL and body for each write of the admin route table (on records that exist, or harmless ones). */
const WRITES: Readonly<Record<string, { url: string; body?: object }>> = {
  'POST /admin/keys': { url: '/admin/keys', body: { team: 'team-a' } },
  'PATCH /admin/keys/:id': { url: '/admin/keys/team-a-bot', body: { description: 'x' } },
  'DELETE /admin/keys/:id': { url: '/admin/keys/team-a-bot' },
  'POST /admin/keys/:id/rotate': { url: '/admin/keys/team-a-bot/rotate', body: {} },
  'POST /admin/teams': { url: '/admin/teams', body: { id: 'csrf-probe' } },
  'PATCH /admin/teams/:id': { url: '/admin/teams/team-b', body: { disabled: true } },
  'DELETE /admin/teams/:id': { url: '/admin/teams/team-b' },
  'POST /admin/admin-keys': { url: '/admin/admin-keys', body: { role: 'admin' } },
  'PATCH /admin/admin-keys/:id': { url: '/admin/admin-keys/ops', body: { description: 'x' } },
  'DELETE /admin/admin-keys/:id': { url: '/admin/admin-keys/ops' },
  'POST /admin/admin-keys/:id/rotate': { url: '/admin/admin-keys/ops/rotate', body: {} },
  'PUT /admin/resources/:kind/:id': { url: '/admin/resources/model/m1', body: { team: 'team-b', project: 'p' } },
  'DELETE /admin/resources/:kind/:id': { url: '/admin/resources/model/m1' },
  'POST /admin/notifications/test': { url: '/admin/notifications/test' },
  'POST /admin/notifications/:id/retry': { url: '/admin/notifications/none-such/retry' },
  'POST /admin/config/reload': { url: '/admin/config/reload' },
};
const WRITE_ROUTES = ADMIN_ROUTES.filter((route) => route.write !== null).map((route) => `${route.method} ${route.path}`);

interface Session {
  readonly cookie: string;
  readonly csrf: string;
}

/** The attacker's aim on every write: anything but a refusal would have changed something. */
describe('hostile admin callers', () => {
  let stack: Stack;
  let url: string;
  const signIn = async (key: string): Promise<Session> => {
    const res = await request(url).post('/admin/session').send({ key });
    expect(res.status).toBe(200);
    const cookie = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    return { cookie, csrf: res.body.csrfToken as string };
  };
  const send = (method: string, path: string, headers: Record<string, string>, body?: object) => {
    const call = request(url)[method.toLowerCase() as Method](path).set(headers);
    return body === undefined ? call : call.send(body);
  };

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
    url = stack.gw.url;
    // Another team's data to aim at: ledger rows, a key of its own, a resource.
    await request(url).get('/v1/models').set('authorization', bearer(KEYS.teamB)).expect(200);
    await request(url).post('/admin/keys').set(admin).send({ team: 'team-b', description: 'team-b secret plans' }).expect(201);
    await request(url).put('/admin/resources/model/m-b').set(admin).send({ team: 'team-b', project: 'p' }).expect(200);
    await stack.gw.gateway.settled();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('names a probe for every write of the admin route table', () => {
    expect(Object.keys(WRITES).sort()).toEqual([...WRITE_ROUTES].sort());
  });

  it('refuses every cookie-authenticated write without its own session\'s CSRF token: none, another session\'s, one in the query', async () => {
    const mine = await signIn(KEYS.admin);
    const theirs = await signIn(KEYS.admin);
    const seen: string[] = [];
    for (const route of WRITE_ROUTES) {
      const { url: path, body } = WRITES[route]!;
      const method = route.split(' ')[0]!;
      const attempts = {
        none: send(method, path, { cookie: mine.cookie }, body),
        'another session\'s': send(method, path, { cookie: mine.cookie, 'x-csrf-token': theirs.csrf }, body),
        'in the query': send(method, `${path}?x-csrf-token=${mine.csrf}&csrfToken=${mine.csrf}`, { cookie: mine.cookie }, body),
        'empty': send(method, path, { cookie: mine.cookie, 'x-csrf-token': '' }, body),
      };
      for (const [how, attempt] of Object.entries(attempts)) {
        const res = await attempt;
        seen.push(`${route} ${how}: ${res.status}`);
        expect([route, how, res.status, res.body]).toEqual([route, how, 403, csrfRefusal]);
      }
    }
    // Nothing happened: the key, team and admin key the writes aimed at are as they were.
    expect((await request(url).get('/admin/keys/team-a-bot').set(admin)).body.description).not.toBe('x');
    expect((await request(url).get('/admin/teams/team-b').set(admin)).body.disabled).toBe(false);
    expect((await request(url).get('/admin/teams/csrf-probe').set(admin)).status).toBe(404);
    expect((await request(url).get('/admin/admin-keys/ops').set(admin)).status).toBe(200);
    expect(seen).toHaveLength(WRITE_ROUTES.length * 4);
  });

  it('lets a viewer write nothing, by key or by session (with its CSRF token): 403 insufficient_role on every write route', async () => {
    const session = await signIn(VIEWER);
    for (const route of WRITE_ROUTES) {
      const { url: path, body } = WRITES[route]!;
      const method = route.split(' ')[0]!;
      for (const [how, headers] of [
        ['key', { authorization: bearer(VIEWER) }],
        ['session', { cookie: session.cookie, 'x-csrf-token': session.csrf }],
      ] as const) {
        const res = await send(method, path, headers, body);
        expect([route, how, res.status, res.body.error?.code]).toEqual([route, how, 403, 'insufficient_role']);
      }
    }
  });

  it('keeps admin credentials off /v1 and /v1 keys off /admin', async () => {
    const session = await signIn(KEYS.admin);
    const v1 = [
      ['admin key', { authorization: bearer(KEYS.admin), 'openai-project': 'team-a/p' }],
      ['viewer key', { authorization: bearer(VIEWER), 'openai-project': 'team-a/p' }],
      ['session cookie', { cookie: session.cookie, 'openai-project': 'team-a/p' }],
      ['session token as a bearer', { authorization: bearer(session.cookie.split('=')[1]!), 'openai-project': 'team-a/p' }],
    ] as const;
    for (const [how, headers] of v1) {
      const res = await request(url).get('/v1/models').set(headers);
      expect([how, res.status, res.body.error?.code]).toEqual([how, 401, 'invalid_api_key']);
    }
    const chats = stack.inference.requests?.length;
    const chat = await request(url).post('/v1/chat/completions').set({ cookie: session.cookie, 'x-csrf-token': session.csrf }).send({ model: 'm', messages: [] });
    expect([chat.status, stack.inference.requests?.length]).toEqual([401, chats]);
    for (const key of [KEYS.teamA, KEYS.teamB]) {
      const res = await request(url).get('/admin/keys').set('authorization', bearer(key));
      expect([res.status, JSON.stringify(res.body).includes('team-b secret plans')]).toEqual([403, false]);
      const signInWithIt = await request(url).post('/admin/session').send({ key });
      expect([signInWithIt.status, signInWithIt.headers['set-cookie']]).toEqual([403, undefined]);
    }
  });

  /** Every `team` value anywhere in a JSON answer. */
  const teamsIn = (value: unknown, into: Set<string> = new Set()): Set<string> => {
    if (Array.isArray(value)) for (const item of value) teamsIn(item, into);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key === 'team' && typeof item === 'string') into.add(item);
        else teamsIn(item, into);
      }
    }
    return into;
  };

  const LOOKALIKES = ['team-b', 'TEAM-B', 'Team-b', 'team-b ', ' team-b', 'team-b%20', 'team%2Db', 'team-\u0431', 'team\u2011b', 'team-\uff42', 'team-b%00', 'team-b\u200b'];
  const FILTERS = [
    ...LOOKALIKES.map((team) => `team=${encodeURIComponent(team)}`),
    'team=team-a&team=team-b',
    'team=team-b&team=team-a',
    'team[]=team-b',
    'team[0]=team-b',
    'team[team-b]=1',
    'team=team-a,team-b',
    'team=*',
    'team=',
  ];
  /** The admin reads that take a team filter, with the rest of the query each needs. */
  const TEAM_FILTERED: Readonly<Record<string, string>> = {
    '/admin/usage': `from=${DAY}&to=${DAY}&`,
    '/admin/usage/requests': `from=${DAY}&to=${DAY}&`,
    '/admin/audit': `from=${DAY}&to=${DAY}&`,
    '/admin/keys': '',
    '/admin/resources': '',
    '/admin/overview': '',
    '/admin/teams': '',
  };

  it('never shows a team-admin another team\'s rows through a team filter, whatever its spelling', async () => {
    // What there is to leak: the admin sees team-b's key and ledger rows with the plain filter.
    for (const path of ['/admin/keys', '/admin/usage/requests', '/admin/resources']) {
      const all = await request(url).get(`${path}?${TEAM_FILTERED[path]!}team=team-b`).set(admin);
      expect([path, teamsIn(all.body).has('team-b')]).toEqual([path, true]);
    }
    const leaks: string[] = [];
    const answered = new Set<number>();
    for (const [path, query] of Object.entries(TEAM_FILTERED)) {
      for (const filter of FILTERS) {
        const res = await request(url).get(`${path}?${query}${filter}`).set(lead);
        answered.add(res.status);
        const teams = [...teamsIn(res.body)].filter((team) => team !== 'team-a');
        if (res.status >= 500 || teams.length > 0 || JSON.stringify(res.body).includes('team-b secret plans')) leaks.push(`${path}?${filter}: ${res.status} ${teams.join(',')}`);
      }
    }
    expect(leaks).toEqual([]);
    expect([...answered].sort()).toEqual([200, 400]);
  });

  const PATH_IDS = ['team-b-bot', 'TEAM-B-BOT', 'team-b-bot%20', '%74eam-b-bot', 'team%2Db%2Dbot', 'team-b-bot%00', 'team-\u0431-bot', '..%2Fteam-b-bot', 'team-a-bot%2F..%2Fteam-b-bot', 'team-b-bot%3A'];

  it('never reads or changes another team\'s key, team or resource through an encoded or look-alike path id', async () => {
    expect((await request(url).get('/admin/keys/team-b-bot').set(admin)).status).toBe(200);
    for (const id of PATH_IDS) {
      for (const [method, path, body] of [
        ['GET', `/admin/keys/${id}`, undefined],
        ['PATCH', `/admin/keys/${id}`, { description: 'pwned' }],
        ['POST', `/admin/keys/${id}/rotate`, {}],
        ['DELETE', `/admin/keys/${id}`, undefined],
        ['GET', `/admin/teams/${id.replace('-bot', '')}`, undefined],
      ] as const) {
        const res = await send(method, path, lead, body);
        expect([method, path, res.status < 500, [200, 201, 204].includes(res.status)]).toEqual([method, path, true, false]);
        expect(JSON.stringify(res.body)).not.toContain('team-b secret plans');
      }
    }
    const stored = await request(url).get('/admin/keys?team=team-b').set(admin);
    expect(stored.body.data.map((key: { id: string; description: string | null; revokedAt?: string | null }) => [key.id, key.description])).toEqual(
      expect.arrayContaining([['team-b-bot', null]]),
    );
    expect(stored.body.data.some((key: { description: string | null }) => key.description === 'pwned')).toBe(false);
  });

  it('answers every authenticated admin read and refusal with Cache-Control: no-store', async () => {
    const session = await signIn(KEYS.admin);
    const reads = ADMIN_ROUTES.filter((route) => route.method === 'GET').map((route) => route.path.replace(':id', 'team-a'));
    for (const path of [...reads, '/admin/session']) {
      for (const headers of [admin, { cookie: session.cookie }, lead]) {
        const res = await request(url).get(`${path}?from=${DAY}&to=${DAY}`).set(headers);
        expect([path, res.headers['cache-control']]).toEqual([path, 'no-store']);
      }
    }
    const created = await request(url).post('/admin/keys').set(admin).send({ team: 'team-a' });
    expect([created.status, created.headers['cache-control']]).toEqual([201, 'no-store']);
    const signedIn = await request(url).post('/admin/session').send({ key: KEYS.admin });
    expect([signedIn.status, signedIn.headers['cache-control']]).toEqual([200, 'no-store']);
    const csv = await request(url).get(`/admin/usage?from=${DAY}&to=${DAY}&format=csv`).set(admin);
    expect([csv.status, csv.headers['cache-control']]).toEqual([200, 'no-store']);
  });
});
