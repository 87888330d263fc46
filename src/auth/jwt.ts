import { createRemoteJWKSet, errors as joseErrors, importSPKI, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type CryptoKey } from 'jose';
import { ConfigError, type JwtConfig } from '../config/index.js';
import { errors } from '../errors.js';
import { defaultProjectOf, isValidName, NAME_RULE } from '../projects/index.js';
import type { Principal } from './principal.js';
import { AuthFailure } from './failure.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when a bearer token looks like a compact JWS (three base64url segments). */
export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

type KeySource = Uint8Array | CryptoKey | JWTVerifyGetKey;

async function buildKeySource(config: JwtConfig): Promise<KeySource> {
  if (config.secret !== undefined) return new TextEncoder().encode(config.secret);
  if (config.publicKey !== undefined) {
    const alg = config.algorithms?.[0] ?? 'RS256';
    try {
      return await importSPKI(config.publicKey, alg);
    } catch (err) {
      throw new ConfigError(`auth.jwt.publicKey: not a PEM public key usable with ${alg} (${(err as Error).message})`);
    }
  }
  return remoteKeys(
    createRemoteJWKSet(new URL(config.jwksUrl!), {
      cacheMaxAge: config.jwksCacheMaxAgeMs,
      timeoutDuration: config.jwksTimeoutMs,
    }),
  );
}

/** The identity provider's key set could not be had: fetch failed, timed out, or the answer was not a usable key set. */
class KeySourceOutage extends Error {}

/**
 * A remote key set whose failures are sorted where they happen: a token whose `kid`/`alg` picks
 * no key, or several, is the token's fault (401); anything else the key set throws — no answer,
 * a timeout, a 500, a body that is not a key set, a key that cannot be imported — means the
 * keys could not be had (503, so clients retry rather than drop a good token).
 */
function remoteKeys(keySet: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await keySet(header, token);
    } catch (err) {
      if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) throw err;
      throw new KeySourceOutage('the JWKS could not be used', { cause: err });
    }
  };
}

/**
 * The projects a token may use: its claim as a list or a space/comma-separated string (absent:
 * any); names that could never match the header are left out. A claim of another type (a
 * number, an object, null) names none: a malformed claim never widens a token to every project.
 */
function claimAsProjects(value: unknown): string[] {
  if (value === undefined) return ['*'];
  const named: unknown[] = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  return named.filter((v): v is string => typeof v === 'string' && (v === '*' || isValidName(v)));
}

/**
 * A token's model patterns (SPEC 21): a list or a space/comma-separated string; absent: undefined
 * (`auth.jwt.models` applies). A claim of another type, or entries that are not non-empty strings,
 * allow nothing: a malformed claim never widens a token.
 */
function claimAsModels(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const named: unknown[] = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  return named.every((v) => typeof v === 'string' && v !== '') ? (named as string[]) : [];
}

export interface JwtVerifier {
  verify(token: string): Promise<Principal>;
}

/** Builds a verifier once from config: the key (secret, PEM or cached remote JWKS) is prepared here. */
export async function createJwtVerifier(config: JwtConfig): Promise<JwtVerifier> {
  const keySource = await buildKeySource(config);
  const options = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: config.algorithms,
    // A signed token without `exp` would be valid forever; refused unless the operator opts out.
    requiredClaims: config.requireExpiry ? ['exp'] : [],
  };
  // Two arms that read alike: jose's jwtVerify has one overload for a key and one for a key
  // resolver (remote JWKS), and TypeScript picks an overload only for a narrowed argument.
  const verifySignature = (token: string): Promise<{ payload: JWTPayload }> =>
    typeof keySource === 'function' ? jwtVerify(token, keySource, options) : jwtVerify(token, keySource, options);
  const { claims } = config;
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        payload = (await verifySignature(token)).payload;
      } catch (err) {
        if (err instanceof KeySourceOutage) {
          throw errors.authUnavailable();
        }
        if (err instanceof joseErrors.JWTExpired) throw new AuthFailure('expired', 'The token has expired.');
        if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'exp' && err.reason === 'missing') {
          throw new AuthFailure('invalid_token', 'The token has no expiry (exp claim); tokens that never expire are refused.');
        }
        throw new AuthFailure('invalid_token', 'The token could not be verified (signature, issuer, audience or algorithm).');
      }
      const team = payload[claims.team];
      const subject = payload[claims.subject];
      if (typeof team !== 'string' || !isValidName(team)) {
        throw new AuthFailure('invalid_token', `The token has no valid "${claims.team}" claim naming the team.`);
      }
      if (typeof subject !== 'string' || subject === '') {
        throw new AuthFailure('invalid_token', `The token has no "${claims.subject}" claim.`);
      }
      // Each token carries its own projects, so `auth.jwt.defaultProject` cannot be checked against
      // them once in the config: it is used for the tokens that may use it, and any other token
      // falls back to the rule of a key that names no default — never to a project it may not name.
      const projects = claimAsProjects(payload[claims.projects]);
      const defaultProject = defaultProjectOf(projects, config.defaultProject) ?? defaultProjectOf(projects);
      if (defaultProject === undefined) {
        throw new AuthFailure('invalid_token', `The token's "${claims.projects}" claim names no project (${NAME_RULE}, or "*").`);
      }
      const models = claimAsModels(payload[claims.models ?? 'models']) ?? config.models;
      return { kind: 'jwt', id: subject, team, projects: new Set(projects), defaultProject, limits: config.limits, models };
    },
  };
}
