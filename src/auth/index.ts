import type { Config } from '../config/index.js';
import { errors } from '../errors.js';
import { AuthFailure } from './failure.js';
import { createJwtVerifier, looksLikeJwt, type JwtVerifier } from './jwt.js';
import type { Principal } from './principal.js';
import type { RuntimeKeys } from './runtime-keys.js';
import type { RuntimeAdminKeys } from './runtime-admin-keys.js';
import { sha256Hex } from '../key-secrets.js';
import { StaticKeyTable } from './static-keys.js';

export { AuthFailure, AUTH_FAILURE_REASONS, type AuthFailureReason } from './failure.js';
export { AuthFailureLimit, type AuthFailureLimitOptions } from './failure-limit.js';
export { clientAddress } from './client-address.js';
export type { Principal, ProjectRef } from './principal.js';
export { RuntimeKeys, storedDefaultProject, type RuntimeKey } from './runtime-keys.js';
export { StaticKeyTable } from './static-keys.js';
export { RuntimeAdminKeys } from './runtime-admin-keys.js';

/** The identity behind an admin key: may call /admin/*, nothing under /v1. */
export interface AdminPrincipal {
  readonly id: string;
  /** What it may do (SPEC 16); config keys without one are `admin`. */
  readonly role: 'admin' | 'viewer' | 'team-admin';
  /** The one team a `team-admin` manages; null for the other roles. */
  readonly team: string | null;
  /** A person signed in to the console through the identity provider (SPEC 25): their email, for the audit. */
  readonly email?: string;
}

/** Whether a team's keys are refused (SPEC 16: a disabled team, 403 team_disabled). */
export interface TeamStatus {
  isDisabled(team: string): boolean;
}

const NO_TEAMS: TeamStatus = { isDisabled: () => false };

/** A valid key of a disabled team: a 403 rather than a 401, the key itself is fine. */
function refuseDisabledTeam(principal: Principal, teams: TeamStatus): Principal {
  if (teams.isDisabled(principal.team)) {
    throw errors.teamDisabled(principal.team);
  }
  return principal;
}

export interface Authenticator {
  /** Resolves the caller of a /v1 route; throws AuthFailure (401) or GatewayError 503 (JWKS down). */
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** Resolves the caller of an /admin route; 401 for no/unknown key, 403 for a valid non-admin key. */
  authenticateAdmin(authorization: string | undefined): Promise<AdminPrincipal>;
  /** Static and runtime keys plus a JWT issuer: zero means nothing under /v1 can be called yet. */
  credentialCount(): number;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') {
    throw new AuthFailure('missing', 'Missing API key: send it as "Authorization: Bearer <key>".');
  }
  const match = BEARER.exec(authorization);
  if (!match) throw new AuthFailure('malformed', 'Malformed Authorization header: expected "Bearer <key>".');
  return match[1]!;
}

/**
 * Builds the authenticator from config (static keys and the JWT key source are prepared here)
 * over the runtime keys of the admin API, which outlive config reloads.
 */
export async function createAuthenticator(
  config: Pick<Config, 'auth'>,
  runtimeKeys: RuntimeKeys,
  teams: TeamStatus = NO_TEAMS,
  runtimeAdmins?: RuntimeAdminKeys,
): Promise<Authenticator> {
  const principals = config.auth.keys.map(
    (key): Principal & { sha256: string } => ({
      kind: 'key',
      id: key.id,
      sha256: key.sha256,
      team: key.team,
      projects: new Set(key.projects),
      defaultProject: key.defaultProject,
      limits: key.limits,
      models: key.models,
    }),
  );
  const keys = new StaticKeyTable(principals);
  const admins = new StaticKeyTable(config.auth.admin.keys);
  const jwt: JwtVerifier | undefined = config.auth.jwt ? await createJwtVerifier(config.auth.jwt) : undefined;

  return {
    credentialCount: () => keys.size + runtimeKeys.size + (jwt ? 1 : 0),
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      const digest = sha256Hex(token);
      const principal = keys.find(digest) ?? runtimeKeys.authenticate(digest, Date.now());
      if (principal) return refuseDisabledTeam(principal, teams);
      if (jwt && looksLikeJwt(token)) return refuseDisabledTeam(await jwt.verify(token), teams);
      if (admins.find(digest) || runtimeAdmins?.authenticate(digest, Date.now())) {
        throw new AuthFailure('admin_key', 'Admin keys are only valid on /admin routes; use an API key for /v1.');
      }
      throw new AuthFailure('unknown_key', 'Incorrect API key provided.');
    },
    async authenticateAdmin(authorization) {
      const token = bearerToken(authorization);
      const digest = sha256Hex(token);
      const admin = admins.find(digest);
      if (admin) return { id: admin.id, role: admin.role, team: admin.team ?? null };
      const made = runtimeAdmins?.authenticate(digest, Date.now());
      if (made) return { id: made.id, role: made.role, team: made.team };
      const isUserCredential =
        keys.find(digest) !== undefined ||
        runtimeKeys.authenticate(digest, Date.now()) !== undefined ||
        (jwt !== undefined && looksLikeJwt(token) && (await jwt.verify(token).then(() => true, () => false)));
      if (isUserCredential) throw new AuthFailure('not_admin', 'This key is not an admin key; /admin routes need a key from auth.admin.keys.');
      throw new AuthFailure('unknown_key', 'Incorrect API key provided.');
    },
  };
}
export { createJwtVerifier, looksLikeJwt } from './jwt.js';
