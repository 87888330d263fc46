import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createAuthenticator, RuntimeAdminKeys, RuntimeKeys, type Authenticator } from '../../../src/auth/index.js';
import { sha256Hex } from '../../../src/key-secrets.js';
import { validateConfig } from '../../../src/config/index.js';
import { GatewayError } from '../../../src/errors.js';

/**
 * The authenticator as the routes use it: the bearer header read, then static keys, runtime
 * keys, a JWT issuer and admin keys (static and runtime) tried in that order, each failure with
 * the status, code and message a client sees.
 */

const SECRET = 'a-very-long-test-secret-for-hs256-signing!!';
const USER_KEY = 'sk-tollgate-user-static';
const RUNTIME_KEY = 'sk-tollgate-user-runtime';
const ADMIN_KEY = 'sk-tollgate-admin-static';
const TEAM_ADMIN_KEY = 'sk-tollgate-team-admin-static';
const RUNTIME_ADMIN_KEY = 'sk-tollgate-admin-runtime';

const config = (jwt: boolean) =>
  validateConfig(
    {
      upstreams: { service: { url: 'http://svc:1' }, inference: { url: 'http://inf:1' } },
      auth: {
        keys: [{ id: 'static-user', sha256: sha256Hex(USER_KEY), team: 'team-a', projects: ['rl', 'eval'] }],
        admin: {
          keys: [
            { id: 'static-admin', sha256: sha256Hex(ADMIN_KEY) },
            { id: 'static-team-admin', sha256: sha256Hex(TEAM_ADMIN_KEY), role: 'team-admin', team: 'team-b' },
          ],
        },
        ...(jwt ? { jwt: { secret: SECRET } } : {}),
      },
    },
    'test',
  );

function runtimeKeys(): RuntimeKeys {
  const keys = new RuntimeKeys();
  const record = { id: 'key-00000000000000aa', team: 'team-c', projects: ['*'], defaultProject: 'default', limits: {}, description: null, createdAt: '2029-01-01T00:00:00.000Z', expiresAt: null, disabled: false, revokedAt: null };
  keys.replaceAll([{ record, secrets: [{ sha256: sha256Hex(RUNTIME_KEY), validUntil: null }] }]);
  return keys;
}

function runtimeAdmins(): RuntimeAdminKeys {
  const admins = new RuntimeAdminKeys();
  const record = { id: 'adm-00000000000000bb', role: 'viewer' as const, team: null, description: null, createdAt: '2029-01-01T00:00:00.000Z', expiresAt: null, disabled: false, revokedAt: null };
  admins.replaceAll([{ record, secrets: [{ sha256: sha256Hex(RUNTIME_ADMIN_KEY), validUntil: null }] }]);
  return admins;
}

const authenticator = (options: { jwt?: boolean; disabledTeams?: string[] } = {}): Promise<Authenticator> =>
  createAuthenticator(config(options.jwt ?? false), runtimeKeys(), { isDisabled: (team) => (options.disabledTeams ?? []).includes(team) }, runtimeAdmins());

const token = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('svc-trainer').setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));

/** What the client is answered: status, code and message, or the identity on success. */
async function answer<T>(work: Promise<T>): Promise<T | { status: number; code: string; message: string }> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { status: err.status, code: err.code, message: err.message };
  }
}

const MISSING = { status: 401, code: 'invalid_api_key', message: 'Missing API key: send it as "Authorization: Bearer <key>".' };
const MALFORMED = { status: 401, code: 'invalid_api_key', message: 'Malformed Authorization header: expected "Bearer <key>".' };
const UNKNOWN = { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' };

describe('the authenticator: the bearer header', () => {
  it.each([
    ['no header', undefined, MISSING],
    ['an empty header', '', MISSING],
    ['another scheme', `Basic ${USER_KEY}`, MALFORMED],
    ['the scheme alone', 'Bearer', MALFORMED],
    ['the scheme and a space', 'Bearer ', MALFORMED],
    ['two tokens', `Bearer ${USER_KEY} more`, MALFORMED],
    ['no space after the scheme', `Bearer${USER_KEY}`, MALFORMED],
    ['text before the scheme', `x Bearer ${USER_KEY}`, MALFORMED],
  ])('refuses %s', async (_what, header, refusal) => {
    const auth = await authenticator();
    expect(await answer(auth.authenticate(header))).toEqual(refusal);
    expect(await answer(auth.authenticateAdmin(header))).toEqual(refusal);
  });

  it.each([
    ['the scheme in any case', `bEARER ${USER_KEY}`],
    ['tabs and several spaces around the key', `Bearer \t  ${USER_KEY} \t`],
  ])('reads %s', async (_what, header) => {
    expect(await answer((await authenticator()).authenticate(header))).toMatchObject({ kind: 'key', id: 'static-user', team: 'team-a' });
  });
});

describe('the authenticator: /v1 callers', () => {
  it('finds a static key, a runtime key and a JWT, each as its principal', async () => {
    const auth = await authenticator({ jwt: true });
    expect(await auth.authenticate(`Bearer ${USER_KEY}`)).toMatchObject({ kind: 'key', id: 'static-user', team: 'team-a', projects: new Set(['rl', 'eval']), defaultProject: 'rl' });
    expect(await auth.authenticate(`Bearer ${RUNTIME_KEY}`)).toMatchObject({ kind: 'key', id: 'key-00000000000000aa', team: 'team-c' });
    expect(await auth.authenticate(`Bearer ${await token({ team: 'team-d' })}`)).toMatchObject({ kind: 'jwt', id: 'svc-trainer', team: 'team-d' });
  });

  it('refuses a valid key or token of a disabled team with 403 team_disabled, naming the team', async () => {
    const auth = await authenticator({ jwt: true, disabledTeams: ['team-a', 'team-c', 'team-d'] });
    for (const credential of [USER_KEY, RUNTIME_KEY, await token({ team: 'team-d' })]) {
      const refused = await answer(auth.authenticate(`Bearer ${credential}`));
      expect(refused).toMatchObject({ status: 403, code: 'team_disabled' });
    }
    expect(await answer(auth.authenticate(`Bearer ${USER_KEY}`))).toMatchObject({ message: expect.stringContaining('team-a') });
  });

  it('tells an admin key on /v1 apart from an unknown one (static and runtime admin keys)', async () => {
    const auth = await authenticator();
    const adminOnV1 = { status: 401, code: 'invalid_api_key', message: 'Admin keys are only valid on /admin routes; use an API key for /v1.' };
    expect(await answer(auth.authenticate(`Bearer ${ADMIN_KEY}`))).toEqual(adminOnV1);
    expect(await answer(auth.authenticate(`Bearer ${RUNTIME_ADMIN_KEY}`))).toEqual(adminOnV1);
    expect(await answer(auth.authenticate('Bearer sk-nobody'))).toEqual(UNKNOWN);
  });

  it('reads a token that looks like a JWT as unknown when no issuer is configured', async () => {
    expect(await answer((await authenticator()).authenticate(`Bearer ${await token({ team: 'team-d' })}`))).toEqual(UNKNOWN);
  });

  it('counts what can call /v1: static keys, runtime keys and a JWT issuer', async () => {
    expect((await authenticator()).credentialCount()).toBe(2);
    expect((await authenticator({ jwt: true })).credentialCount()).toBe(3);
    expect((await createAuthenticator(config(false), new RuntimeKeys())).credentialCount()).toBe(1);
  });

  it('disables no team when it is given no team status', async () => {
    const auth = await createAuthenticator(config(false), new RuntimeKeys());
    expect(await auth.authenticate(`Bearer ${USER_KEY}`)).toMatchObject({ kind: 'key', id: 'static-user', team: 'team-a' });
  });
});

describe('the authenticator: /admin callers', () => {
  it('answers the role and team of static and runtime admin keys', async () => {
    const auth = await authenticator();
    expect(await auth.authenticateAdmin(`Bearer ${ADMIN_KEY}`)).toEqual({ id: 'static-admin', role: 'admin', team: null });
    expect(await auth.authenticateAdmin(`Bearer ${TEAM_ADMIN_KEY}`)).toEqual({ id: 'static-team-admin', role: 'team-admin', team: 'team-b' });
    expect(await auth.authenticateAdmin(`Bearer ${RUNTIME_ADMIN_KEY}`)).toEqual({ id: 'adm-00000000000000bb', role: 'viewer', team: null });
  });

  it('refuses a /v1 credential (static key, runtime key, valid JWT) as not an admin key, anything else as unknown', async () => {
    const auth = await authenticator({ jwt: true });
    const notAdmin = { status: 403, code: 'admin_required', message: 'This key is not an admin key; /admin routes need a key from auth.admin.keys.' };
    for (const credential of [USER_KEY, RUNTIME_KEY, await token({ team: 'team-d' })]) {
      expect(await answer(auth.authenticateAdmin(`Bearer ${credential}`))).toEqual(notAdmin);
    }
    // A token signed with another secret is no credential at all.
    const forged = await new SignJWT({ team: 'team-d' }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setExpirationTime('5m').sign(new TextEncoder().encode(`${SECRET}-other`));
    expect(await answer(auth.authenticateAdmin(`Bearer ${forged}`))).toEqual(UNKNOWN);
    expect(await answer(auth.authenticateAdmin('Bearer sk-nobody'))).toEqual(UNKNOWN);
  });
});
