import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, exportSPKI, SignJWT, type JWTPayload } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { freePort } from '../../helpers/ports.js';
import { ConfigError, type JwtConfig } from '../../../src/config/index.js';
import { AuthFailure, createJwtVerifier, looksLikeJwt } from '../../../src/auth/index.js';

/**
 * What a JWT bearer yields once verified (SPEC 5.2): the principal a request runs as (team,
 * projects, default project, subject, limits) or the 401 message the client reads. The gateway
 * answers around it are in test/integration/gateway/auth.test.ts.
 */

const SECRET = 'a-very-long-test-secret-for-hs256-signing!!';
const KEY = new TextEncoder().encode(SECRET);

const config = (changes: Partial<JwtConfig> = {}): JwtConfig => ({
  secret: SECRET,
  algorithms: ['HS256'],
  claims: { team: 'team', projects: 'projects', subject: 'sub' },
  limits: { rpm: 7 },
  requireExpiry: true,
  jwksCacheMaxAgeMs: 600_000,
  jwksTimeoutMs: 5_000,
  ...changes,
});

const sign = (claims: Record<string, unknown>, subject: string | null = 'alice@acme'): Promise<string> => {
  const token = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m');
  return (subject === null ? token : token.setSubject(subject)).sign(KEY);
};

/** The principal a token yields, projects as a sorted list. */
async function principal(claims: Record<string, unknown>, changes: Partial<JwtConfig> = {}) {
  const verifier = await createJwtVerifier(config(changes));
  const p = await verifier.verify(await sign(claims));
  return { ...p, projects: [...p.projects].sort() };
}

/** The 401 message a token is refused with. */
async function refusal(token: string, changes: Partial<JwtConfig> = {}): Promise<string> {
  const verifier = await createJwtVerifier(config(changes));
  try {
    await verifier.verify(token);
  } catch (err) {
    if (!(err instanceof AuthFailure)) throw err;
    expect(err.status).toBe(401);
    return `${err.reason}: ${err.message}`;
  }
  throw new Error('the token was accepted');
}

describe('looksLikeJwt', () => {
  it.each([
    ['a compact JWS', 'eyJh.eyJz.c2ln', true],
    ['an unsecured JWS (empty signature)', 'eyJh.eyJz.', true],
    ['an API key', 'tg-abcdefghijklmnop', false],
    ['two segments', 'eyJh.eyJz', false],
    ['four segments', 'eyJh.eyJz.c2ln.eHh4', false],
    ['an empty first segment', '.eyJz.c2ln', false],
    ['an empty payload', 'eyJh..c2ln', false],
    ['a space before it', ' eyJh.eyJz.c2ln', false],
    ['a space after it', 'eyJh.eyJz.c2ln ', false],
  ])('%s: %s', (_, token, expected) => {
    expect(looksLikeJwt(token)).toBe(expected);
  });
});

describe('JWT principal', () => {
  it('runs as its subject and team, with the configured limits', async () => {
    expect(await principal({ team: 'team-j', projects: ['rl'] })).toEqual({ kind: 'jwt', id: 'alice@acme', team: 'team-j', projects: ['rl'], defaultProject: 'rl', limits: { rpm: 7 } });
  });

  it('reads projects from a list, or a string split on spaces and commas', async () => {
    expect((await principal({ team: 't', projects: 'rl, eval  prod,,x' })).projects).toEqual(['eval', 'prod', 'rl', 'x']);
    expect((await principal({ team: 't', projects: ['eval', 'rl'] })).projects).toEqual(['eval', 'rl']);
  });

  it('may use any project of its team when the claim is absent', async () => {
    expect(await principal({ team: 't' })).toMatchObject({ projects: ['*'], defaultProject: 'default' });
  });

  it('leaves out names that could never match the header, and keeps "*"', async () => {
    expect((await principal({ team: 't', projects: ['rl', 'a b', 7, '', '*', 'x/y'] })).projects).toEqual(['*', 'rl']);
  });

  it('uses auth.jwt.defaultProject only for a token that may use it; others get the first project or "default"', async () => {
    expect((await principal({ team: 't', projects: ['rl', 'eval'] }, { defaultProject: 'eval' })).defaultProject).toBe('eval');
    expect((await principal({ team: 't', projects: ['rl', 'prod'] }, { defaultProject: 'eval' })).defaultProject).toBe('rl');
    expect((await principal({ team: 't', projects: ['rl', 'default'] }, { defaultProject: 'eval' })).defaultProject).toBe('default');
    expect((await principal({ team: 't', projects: ['rl', 'default'] })).defaultProject).toBe('default');
  });

  it('reads the claims the config names', async () => {
    const claims = { team: 'org', projects: 'scopes', subject: 'email' };
    expect(await principal({ org: 'team-k', scopes: 'a b', email: 'bob@k', team: 'ignored' }, { claims })).toMatchObject({ id: 'bob@k', team: 'team-k', projects: ['a', 'b'] });
  });
});

describe('JWT refusals (401)', () => {
  it('refuses a team claim that is missing, not a string, or not a valid name, naming the claim', async () => {
    const message = 'invalid_token: The token has no valid "team" claim naming the team.';
    expect(await refusal(await sign({}))).toBe(message);
    expect(await refusal(await sign({ team: 7 }))).toBe(message);
    expect(await refusal(await sign({ team: 'team a' }))).toBe(message);
    expect(await refusal(await sign({ org: 'x' }), { claims: { team: 'org2', projects: 'projects', subject: 'sub' } })).toBe('invalid_token: The token has no valid "org2" claim naming the team.');
  });

  it('refuses a missing, empty or non-string subject, naming the claim', async () => {
    expect(await refusal(await sign({ team: 't' }, null))).toBe('invalid_token: The token has no "sub" claim.');
    expect(await refusal(await sign({ team: 't' }, ''))).toBe('invalid_token: The token has no "sub" claim.');
    expect(await refusal(await sign({ team: 't', uid: 5 }), { claims: { team: 'team', projects: 'projects', subject: 'uid' } })).toBe('invalid_token: The token has no "uid" claim.');
  });

  it('refuses a projects claim that names no usable project', async () => {
    const message = 'invalid_token: The token\'s "projects" claim names no project (1-128 of [A-Za-z0-9._-], or "*").';
    expect(await refusal(await sign({ team: 't', projects: [] }))).toBe(message);
    expect(await refusal(await sign({ team: 't', projects: ['a b', 3] }))).toBe(message);
  });

  it('refuses a projects claim of another type (a number, an object, null) rather than reading it as "any project"', async () => {
    const message = 'invalid_token: The token\'s "projects" claim names no project (1-128 of [A-Za-z0-9._-], or "*").';
    for (const projects of [5, { prod: true }, null, true]) expect(await refusal(await sign({ team: 't', projects }))).toBe(message);
  });

  it('says "expired" for an expired token and names the missing exp', async () => {
    const expired = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'HS256' }).setSubject('a').setExpirationTime('-1m').sign(KEY);
    expect(await refusal(expired)).toBe('expired: The token has expired.');
    const forever = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'HS256' }).setSubject('a').sign(KEY);
    expect(await refusal(forever)).toBe('invalid_token: The token has no expiry (exp claim); tokens that never expire are refused.');
    const verifier = await createJwtVerifier(config({ requireExpiry: false }));
    expect((await verifier.verify(forever)).team).toBe('t');
  });

  it('names the missing exp only: a token without iss (issuer configured) or with a non-numeric exp is "could not be verified"', async () => {
    const unverified = 'invalid_token: The token could not be verified (signature, issuer, audience or algorithm).';
    const noIssuer = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'HS256' }).setSubject('a').setExpirationTime('5m').sign(KEY);
    expect(await refusal(noIssuer, { issuer: 'https://idp.test/' })).toBe(unverified);
    const wordExp = await new SignJWT({ team: 't', exp: 'tomorrow' } as unknown as JWTPayload).setProtectedHeader({ alg: 'HS256' }).setSubject('a').sign(KEY);
    expect(await refusal(wordExp)).toBe(unverified);
  });

  it('refuses a token another secret signed', async () => {
    const other = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'HS256' }).setSubject('a').setExpirationTime('5m').sign(new TextEncoder().encode(`${SECRET}?`));
    expect(await refusal(other)).toBe('invalid_token: The token could not be verified (signature, issuer, audience or algorithm).');
  });
});

describe('JWT public key', () => {
  it('imports the PEM for the first configured algorithm (RS256 when none), and says which in a config error', async () => {
    const { publicKey, privateKey } = await generateKeyPair('PS256');
    const pem = await exportSPKI(publicKey);
    const verifier = await createJwtVerifier(config({ secret: undefined, publicKey: pem, algorithms: ['PS256'] }));
    const token = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'PS256' }).setSubject('a').setExpirationTime('5m').sign(privateKey);
    expect((await verifier.verify(token)).team).toBe('t');
    await expect(createJwtVerifier(config({ secret: undefined, publicKey: 'not a pem', algorithms: undefined }))).rejects.toThrow(ConfigError);
    await expect(createJwtVerifier(config({ secret: undefined, publicKey: 'not a pem', algorithms: undefined }))).rejects.toThrow(/^auth\.jwt\.publicKey: not a PEM public key usable with RS256 \(/);
    await expect(createJwtVerifier(config({ secret: undefined, publicKey: 'not a pem', algorithms: ['ES256'] }))).rejects.toThrow(/^auth\.jwt\.publicKey: not a PEM public key usable with ES256 \(/);
  });
});

/** A JWKS endpoint on a free port that answers every request with `answer` (undefined: never answers). */
describe('JWT with a remote JWKS that cannot be used', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  async function jwks(answer: string | undefined, status = 200): Promise<string> {
    const port = await freePort();
    server = createServer((_, res) => {
      if (answer !== undefined) res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${port}/jwks.json`;
  }

  /** The status and code a token is answered with, and how long verifying took. */
  async function outcome(jwksUrl: string, jwksTimeoutMs = 5_000) {
    const verifier = await createJwtVerifier(config({ secret: undefined, jwksUrl, algorithms: ['RS256'], jwksTimeoutMs }));
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('a').setExpirationTime('5m').sign(privateKey);
    const started = Date.now();
    try {
      await verifier.verify(token);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return { status: err.status, code: err.code, ms: Date.now() - started };
    }
  }

  it('answers 503 auth_unavailable for a key set that is not one (JWKS malformed), not a 401', async () => {
    expect(await outcome(await jwks('{"keys":5}'))).toMatchObject({ status: 503, code: 'auth_unavailable' });
  });

  it('answers 503 auth_unavailable when the JWKS answers 500, or 200 with a body that is not JSON', async () => {
    expect(await outcome(await jwks('{"error":"down"}', 500))).toMatchObject({ status: 503, code: 'auth_unavailable' });
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    expect(await outcome(await jwks('<html>maintenance</html>'))).toMatchObject({ status: 503, code: 'auth_unavailable' });
  });

  it('answers 503 auth_unavailable when nothing listens at the JWKS address', async () => {
    expect(await outcome(`http://127.0.0.1:${await freePort()}/jwks.json`)).toMatchObject({ status: 503, code: 'auth_unavailable' });
  });

  it('answers 503 auth_unavailable for a key set with a key that cannot be imported', async () => {
    const broken = JSON.stringify({ keys: [{ kty: 'RSA', kid: 'k1', alg: 'RS256', e: 'AQAB' }] });
    expect(await outcome(await jwks(broken))).toMatchObject({ status: 503, code: 'auth_unavailable' });
  });

  it("refuses with 401 a token whose kid is not in a good key set (the token's fault, not the provider's)", async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const other = { ...(await exportJWK(publicKey)), kid: 'another-key', alg: 'RS256' };
    const verifier = await createJwtVerifier(config({ secret: undefined, jwksUrl: await jwks(JSON.stringify({ keys: [other] })), algorithms: ['RS256'] }));
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ team: 't' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('a').setExpirationTime('5m').sign(privateKey);
    const refused = await verifier.verify(token).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(AuthFailure);
    expect(refused).toMatchObject({ status: 401, reason: 'invalid_token', message: 'The token could not be verified (signature, issuer, audience or algorithm).' });
  });

  it('answers 503 auth_unavailable once auth.jwt.jwksTimeoutMs passes without an answer, not after fetch\'s own default', async () => {
    const answer = await outcome(await jwks(undefined), 300);
    expect(answer).toMatchObject({ status: 503, code: 'auth_unavailable' });
    expect((answer as { ms: number }).ms).toBeLessThan(3_000);
  });
});
