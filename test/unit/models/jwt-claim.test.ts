import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtVerifier } from '../../../src/auth/index.js';
import type { JwtConfig } from '../../../src/config/index.js';

const SECRET = 'a-very-long-test-secret-for-hs256-signing!!';
const base: JwtConfig = {
  secret: SECRET,
  algorithms: ['HS256'],
  claims: { team: 'team', projects: 'projects', subject: 'sub', models: 'tollgate_models' },
  limits: {},
  requireExpiry: true,
  jwksCacheMaxAgeMs: 600_000,
  jwksTimeoutMs: 5_000,
};

async function modelsOf(claims: Record<string, unknown>, config: Partial<JwtConfig> = {}) {
  const token = await new SignJWT({ team: 'team-a', ...claims }).setProtectedHeader({ alg: 'HS256' }).setSubject('svc').setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
  return (await (await createJwtVerifier({ ...base, ...config })).verify(token)).models;
}

/** SPEC 21: a JWT subject's model list comes from the configured claim, else auth.jwt.models. */
describe('a token\'s model patterns', () => {
  it('reads the configured claim as a list or a space/comma-separated string', async () => {
    expect(await modelsOf({ tollgate_models: ['OpenPipe/*', '@base'] })).toEqual(['OpenPipe/*', '@base']);
    expect(await modelsOf({ tollgate_models: 'OpenPipe/* meta-llama/*,x' })).toEqual(['OpenPipe/*', 'meta-llama/*', 'x']);
  });

  it('falls back to auth.jwt.models, then to none of its own (models.default)', async () => {
    expect(await modelsOf({}, { models: ['@base'] })).toEqual(['@base']);
    expect(await modelsOf({})).toBeUndefined();
  });

  it('allows nothing for a claim that is not a list of non-empty strings (never a wider token)', async () => {
    expect(await modelsOf({ tollgate_models: 42 })).toEqual([]);
    expect(await modelsOf({ tollgate_models: ['OpenPipe/*', 7] })).toEqual([]);
    expect(await modelsOf({ tollgate_models: [''] })).toEqual([]);
  });
});
