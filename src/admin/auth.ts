import type { Request, RequestHandler, Response } from 'express';
import { clientAddress, type AdminPrincipal, type AuthFailureLimit, type Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { asGatewayError, errors } from '../errors.js';
import type { Metrics } from '../observability/index.js';
import { csrfMatches, sessionTokenOf, type ConsoleSessions, type LiveSession } from '../sessions/index.js';

/** What the admin check reads on each request: a config reload changes the admin keys and `trustProxy`. */
export interface AdminAuthCurrent {
  readonly config: Config;
  readonly authenticator: Authenticator;
}

/**
 * The admin key behind a request: its bearer key when it sends one (as before sessions), else
 * its console session cookie (SPEC 17), else the 401 a missing key is.
 */
function credentialOf(req: Request, authenticator: Authenticator, sessions: ConsoleSessions): () => Promise<{ admin: AdminPrincipal; session?: LiveSession }> {
  const token = req.headers.authorization === undefined ? sessionTokenOf(req.headers.cookie) : undefined;
  if (token === undefined) return async () => ({ admin: await authenticator.authenticateAdmin(req.headers.authorization) });
  return async () => {
    const session = await sessions.resolve(token);
    return { admin: session.admin, session };
  };
}

/**
 * Lets only admin keys (or console sessions of one) through to /admin routes (401 unknown, 403 a
 * valid non-admin key, 429 an address past `auth.failureLimit`), and leaves the admin key's id in
 * `res.locals.adminId` for the audit log and the session, if any, in `res.locals.session`.
 */
export function requireAdmin(current: () => AdminAuthCurrent, failureLimit: AuthFailureLimit, metrics: Metrics, sessions: ConsoleSessions): RequestHandler {
  return (req, res, next) => {
    const { config, authenticator } = current();
    failureLimit.guard(clientAddress(req, config.server.trustProxy), credentialOf(req, authenticator, sessions)).then(
      ({ admin, session }) => {
        res.locals.adminId = admin.id;
        res.locals.admin = admin;
        if (session) res.locals.session = session;
        next();
      },
      (err: unknown) => {
        metrics.recordRefusal(asGatewayError(err));
        next(err);
      },
    );
  };
}

/** The console session that authenticated this request, if one did (set by requireAdmin). */
export function sessionOf(res: Response): LiveSession | undefined {
  return res.locals.session as LiveSession | undefined;
}

/**
 * A write authenticated by the session cookie must carry the session's `x-csrf-token` (403
 * csrf_token_invalid): the cookie goes with any request the browser makes, the token only with
 * the console's own. Bearer keys are never sent by a browser on its own, so they need none.
 */
export function requireCsrfToken(): RequestHandler {
  return (req, res, next) => {
    const session = sessionOf(res);
    if (session === undefined || csrfMatches(req.headers['x-csrf-token'], session.csrfToken)) return next();
    next(errors.csrfTokenInvalid());
  };
}
