import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { freePort } from '../../helpers/ports.js';
import { bearer, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

const unauthorized = (message: string) => ({ error: { message, type: 'authentication_error', param: null, code: 'invalid_api_key' } });

describe('static API keys', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers 401 with WWW-Authenticate: Bearer when the key is missing', async () => {
    const res = await request(stack.gw.url).get('/v1/models');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual(unauthorized('Missing API key: send it as "Authorization: Bearer <key>".'));
    expect(stack.inference.requests).toHaveLength(0);
  });

  it('answers 401 for an unknown key without echoing it', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set('authorization', 'Bearer tg-not-a-real-key');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual(unauthorized('Incorrect API key provided.'));
    expect(res.text).not.toContain('tg-not-a-real-key');
  });

  it('answers 401 for a malformed Authorization header', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set('authorization', `Basic ${KEYS.teamA}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Malformed Authorization header: expected "Bearer <key>".'));
  });

  it('refuses admin keys on /v1 routes', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.admin));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Admin keys are only valid on /admin routes; use an API key for /v1.'));
  });

  it('refuses API keys on /admin routes with 403, unknown keys with 401', async () => {
    const forbidden = await request(stack.gw.url).get('/admin/usage?from=2026-11-01&to=2026-11-02').set('authorization', bearer(KEYS.teamA));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('admin_required');
    const unknown = await request(stack.gw.url).get('/admin/usage?from=2026-11-01&to=2026-11-02').set('authorization', 'Bearer nope');
    expect(unknown.status).toBe(401);
  });

  it('does not count a 404 or 405 as served: auth runs only for known routes', async () => {
    const res = await request(stack.gw.url).get('/v1/unknown');
    expect(res.status).toBe(404);
  });
});

describe('project header', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('forwards the header as received when the key may use the project', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA)).set('OpenAI-Project', 'team-a/research');
    expect(res.status).toBe(200);
    expect(stack.inference.last.headers['openai-project']).toBe('team-a/research');
  });

  it('matches the header name case-insensitively', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA)).set('openai-project', 'team-b/x');
    expect(res.status).toBe(403);
  });

  it.each(['team-a', 'team-a/', '/prod', 'team a/prod', 'team-a/prod/x', `team-a/${'p'.repeat(129)}`])(
    'answers 400 invalid_project for %j',
    async (value) => {
      const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA)).set('OpenAI-Project', value);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: {
          message: 'Invalid OpenAI-Project header: expected "<team>/<project>", each 1-128 characters of A-Z a-z 0-9 . _ -.',
          type: 'invalid_request_error',
          param: 'OpenAI-Project',
          code: 'invalid_project',
        },
      });
    },
  );

  it('answers 403 project_forbidden for another team', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA)).set('OpenAI-Project', 'team-b/prod');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: {
        message: 'This key belongs to team "team-a" and cannot act for team "team-b".',
        type: 'permission_error',
        param: 'OpenAI-Project',
        code: 'project_forbidden',
      },
    });
  });

  it('answers 403 for a project the key may not use', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamAProdOnly)).set('OpenAI-Project', 'team-a/research');
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('This key may not use project "team-a/research".');
    const ok = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamAProdOnly)).set('OpenAI-Project', 'team-a/prod');
    expect(ok.status).toBe(200);
  });

  it('checks auth before the project header', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('OpenAI-Project', 'bad');
    expect(res.status).toBe(401);
  });
});

describe('JWT bearer tokens', () => {
  const secret = 'a-very-long-test-secret-for-hs256-signing!!';
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ auth: { jwt: { secret, issuer: 'https://idp.test/', audience: 'tollgate', algorithms: ['HS256'] } } });
  });
  afterAll(async () => {
    await stack.close();
  });

  /** A token signed with the configured secret; `exp: null` leaves the expiry claim out. */
  const sign = (claims: Record<string, unknown>, exp: string | null = '5m', audience = 'tollgate') => {
    const token = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://idp.test/').setAudience(audience).setSubject('alice@acme').setIssuedAt();
    return (exp === null ? token : token.setExpirationTime(exp)).sign(new TextEncoder().encode(secret));
  };

  it('accepts a valid token and attributes the request to its team and projects', async () => {
    const token = await sign({ team: 'team-j', projects: ['rl'] });
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`).set('OpenAI-Project', 'team-j/rl');
    expect(res.status).toBe(200);
    const forbidden = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`).set('OpenAI-Project', 'team-j/other');
    expect(forbidden.status).toBe(403);
  });

  it('answers 401 for an expired token', async () => {
    const token = await sign({ team: 'team-j' }, '-1m');
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('The token has expired.'));
  });

  it('answers 401 for a wrong audience or signature', async () => {
    const wrongAudience = await sign({ team: 'team-j' }, '5m', 'someone-else');
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${wrongAudience}`);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('The token could not be verified (signature, issuer, audience or algorithm).');
    const valid = await sign({ team: 'team-j' });
    const tampered = valid.slice(0, -3) + (valid.endsWith('AAA') ? 'BBB' : 'AAA');
    expect((await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${tampered}`)).status).toBe(401);
  });

  it('answers 401 for a validly signed token without exp: it would never expire', async () => {
    const token = await sign({ team: 'team-j' }, null);
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual({
      error: { message: 'The token has no expiry (exp claim); tokens that never expire are refused.', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
  });

  it('accepts a token without exp when the operator opts out (auth.jwt.requireExpiry: false)', async () => {
    const lenient = await startStack({ auth: { jwt: { secret, issuer: 'https://idp.test/', audience: 'tollgate', algorithms: ['HS256'], requireExpiry: false } } });
    try {
      const token = await sign({ team: 'team-j' }, null);
      expect((await request(lenient.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`)).status).toBe(200);
    } finally {
      await lenient.close();
    }
  });

  it('answers 401 when the team claim is missing', async () => {
    const token = await sign({});
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('The token has no valid "team" claim naming the team.');
  });
});

describe('JWT with a PEM public key', () => {
  it('verifies RS256 tokens against the configured public key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const stack = await startStack({ auth: { jwt: { publicKey: await exportSPKI(publicKey), algorithms: ['RS256'], audience: 'tollgate' } } });
    try {
      const token = await new SignJWT({ team: 'team-p' }).setProtectedHeader({ alg: 'RS256' }).setSubject('svc').setAudience('tollgate').setExpirationTime('5m').sign(privateKey);
      expect((await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});

describe('JWT with a remote JWKS', () => {
  let jwks: Server;
  let jwksUrl: string;
  let jwksHits = 0;
  let privateKey: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => {
      jwksHits += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    jwks.listen(0, '127.0.0.1');
    await once(jwks, 'listening');
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(async () => {
    jwks.closeAllConnections();
    await new Promise((r) => jwks.close(r));
  });

  const sign = () =>
    new SignJWT({ team: 'team-k', projects: '*' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('bob').setIssuer('https://idp.test/').setAudience('tollgate').setExpirationTime('5m').sign(privateKey);

  it('verifies tokens against the JWKS and caches the key set', async () => {
    const stack = await startStack({ auth: { jwt: { jwksUrl, issuer: 'https://idp.test/', audience: 'tollgate', algorithms: ['ES256'] } } });
    try {
      const token = await sign();
      for (let i = 0; i < 3; i++) {
        expect((await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${token}`)).status).toBe(200);
      }
      expect(jwksHits).toBe(1);
    } finally {
      await stack.close();
    }
  });

  it('answers 503 auth_unavailable when the JWKS endpoint cannot be reached', async () => {
    const deadUrl = `http://127.0.0.1:${await freePort()}/jwks.json`;
    const stack = await startStack({ auth: { jwt: { jwksUrl: deadUrl, audience: 'tollgate', algorithms: ['ES256'] } } });
    try {
      const res = await request(stack.gw.url).get('/v1/models').set('authorization', `Bearer ${await sign()}`);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: {
          message: 'The identity provider (JWKS) could not be reached to verify the token; retry shortly.',
          type: 'server_error',
          param: null,
          code: 'auth_unavailable',
        },
      });
    } finally {
      await stack.close();
    }
  });
});
