import type { RequestHandler } from 'express';
import type { Authenticator } from '../auth/index.js';
import { asGatewayError } from '../errors.js';
import type { Metrics } from '../observability/index.js';

/**
 * Lets only admin keys through to /admin routes (401 unknown, 403 a valid non-admin key), and
 * leaves the admin key's id in `res.locals.adminId` for the audit log. The authenticator is
 * asked for on each request: a config reload changes the admin keys.
 */
export function requireAdmin(authenticator: () => Authenticator, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    authenticator()
      .authenticateAdmin(req.headers.authorization)
      .then(
        (admin) => {
          res.locals.adminId = admin.id;
          next();
        },
        (err: unknown) => {
          metrics.recordRefusal(asGatewayError(err));
          next(err);
        },
      );
  };
}
