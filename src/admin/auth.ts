import type { RequestHandler } from 'express';
import { clientAddress, type AuthFailureLimit, type Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { asGatewayError } from '../errors.js';
import type { Metrics } from '../observability/index.js';

/** What the admin check reads on each request: a config reload changes the admin keys and `trustProxy`. */
export interface AdminAuthCurrent {
  readonly config: Config;
  readonly authenticator: Authenticator;
}

/**
 * Lets only admin keys through to /admin routes (401 unknown, 403 a valid non-admin key, 429 an
 * address past `auth.failureLimit`), and leaves the admin key's id in `res.locals.adminId` for
 * the audit log.
 */
export function requireAdmin(current: () => AdminAuthCurrent, failureLimit: AuthFailureLimit, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const { config, authenticator } = current();
    failureLimit
      .guard(clientAddress(req, config.server.trustProxy), () => authenticator.authenticateAdmin(req.headers.authorization))
      .then(
        (admin) => {
          res.locals.adminId = admin.id;
          res.locals.admin = admin;
          next();
        },
        (err: unknown) => {
          metrics.recordRefusal(asGatewayError(err));
          next(err);
        },
      );
  };
}
