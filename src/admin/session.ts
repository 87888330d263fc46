import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { AuthFailure, clientAddress, type AuthFailureLimit } from '../auth/index.js';
import { asGatewayError, errors } from '../errors.js';
import type { Metrics } from '../observability/index.js';
import { csrfMatches, sessionCookie, sessionTokenOf, type ConsoleSessions, type LiveSession } from '../sessions/index.js';
import type { AdminAuthCurrent } from './auth.js';
import type { AuditTrail } from './audit.js';

export interface SessionRouteDeps {
  readonly current: () => AdminAuthCurrent;
  /** Where a person signed in through the IdP goes to sign out there too (SPEC 25), if it says. */
  readonly signOutUrl: (req: Request) => Promise<string | undefined>;
  readonly sessions: ConsoleSessions;
  readonly failureLimit: AuthFailureLimit;
  readonly metrics: Metrics;
  readonly trail: AuditTrail;
}

/** The session answer (contract with the console): who is signed in, and the token its writes must send. */
const sessionBody = (session: LiveSession, signOutUrl?: string): Record<string, unknown> => ({
  role: session.admin.role,
  team: session.admin.team,
  keyId: session.admin.id,
  csrfToken: session.csrfToken,
  expiresAt: session.expiresAt,
  ...(session.person === undefined ? {} : { person: { id: session.person.id, email: session.person.email, name: session.person.name }, signOutUrl: signOutUrl ?? null }),
});

const requestIdOf = (res: Response): string => String(res.getHeader('x-request-id') ?? '');

/** The admin key of a sign-in body: a JSON object with a non-empty string `key` (400 param "key" otherwise). */
function signInKey(body: unknown): string {
  const key = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).key : undefined;
  if (typeof key !== 'string' || key === '') throw errors.sessionKeyMissing();
  return key;
}

/** `POST /admin/session {"key"}`: the key checked as a bearer admin key would be (same 401/403/429), then a session. */
function signIn(deps: SessionRouteDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const { config, authenticator } = deps.current();
      if (!config.console.keySignIn) throw errors.keySignInDisabled();
      const key = signInKey(req.body);
      const admin = await deps.failureLimit
        .guard(clientAddress(req, config.server.trustProxy), async () => {
          // A key with whitespace would read as a malformed Authorization header: it is simply not a key.
          if (/\s/.test(key)) throw new AuthFailure('unknown_key', 'Incorrect API key provided.');
          return authenticator.authenticateAdmin(`Bearer ${key}`);
        })
        .catch((err: unknown) => {
          deps.metrics.recordRefusal(asGatewayError(err));
          throw err;
        });
      const session = await deps.sessions.create(admin);
      deps.trail.record(admin.id, 'session.create', admin.id, 'ok', requestIdOf(res), admin.role);
      res.setHeader('set-cookie', sessionCookie(session.token, req.secure));
      res.json(sessionBody(session));
    } catch (err) {
      next(err);
    }
  };
}

/** A handler on the request's session cookie, through the failure limit like any credential. */
function withSession(deps: SessionRouteDeps, req: Request, token: string): Promise<LiveSession> {
  const { config } = deps.current();
  return deps.failureLimit.guard(clientAddress(req, config.server.trustProxy), () => deps.sessions.resolve(token));
}

const deadSession = (err: unknown): undefined => {
  if (err instanceof AuthFailure && err.status === 401) return undefined;
  throw err;
};

/** `GET /admin/session`: the session answer again, so a reloaded console page continues. */
function currentSession(deps: SessionRouteDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = sessionTokenOf(req.headers.cookie);
      if (token === undefined) throw new AuthFailure('session', 'No console session: sign in with POST /admin/session.');
      const session = await withSession(deps, req, token);
      res.json(sessionBody(session, session.person === undefined ? undefined : await deps.signOutUrl(req)));
    } catch (err) {
      deps.metrics.recordRefusal(asGatewayError(err));
      next(err);
    }
  };
}

/**
 * `DELETE /admin/session`: ends the session everywhere (its row is deleted) and clears the
 * cookie; 204 also when there was none. A live session's sign-out needs its x-csrf-token, like
 * any write on the cookie.
 */
function signOut(deps: SessionRouteDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = sessionTokenOf(req.headers.cookie);
      // A dead session (401) is ended all the same; a throttled address or an unreachable database is answered as such.
      const live = token === undefined ? undefined : await withSession(deps, req, token).catch(deadSession);
      if (live && !csrfMatches(req.headers['x-csrf-token'], live.csrfToken)) throw errors.csrfTokenInvalid();
      const ended = token === undefined ? undefined : await deps.sessions.end(token);
      if (ended) deps.trail.record(ended.adminKeyId, 'session.delete', ended.adminKeyId, 'ok', requestIdOf(res), live?.admin.role, live?.admin.email);
      res.setHeader('set-cookie', sessionCookie(null, req.secure));
      res.status(204).end();
    } catch (err) {
      next(err);
    }
  };
}

/** `/admin/session` (SPEC 17): sign-in, the current session, sign-out. Its 405 is the caller's. */
export function mountSessionRoutes(app: Express, path: string, deps: SessionRouteDeps, methodCheck: RequestHandler): void {
  const json = express.json({ limit: '64kb', strict: false });
  app.route(path).post(json, signIn(deps)).get(currentSession(deps)).delete(signOut(deps)).all(methodCheck);
}
