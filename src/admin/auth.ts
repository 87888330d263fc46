import type { RequestHandler } from 'express';
import type { Authenticator } from '../auth/index.js';
import { asGatewayError } from '../errors.js';
import type { Metrics } from '../observability/index.js';

/** Lets only admin keys through to /admin routes (401 unknown, 403 a valid non-admin key). */
export function requireAdmin(authenticator: Authenticator, metrics: Metrics): RequestHandler {
  return (req, _res, next) => {
    authenticator.authenticateAdmin(req.headers.authorization).then(
      () => next(),
      (err: unknown) => {
        metrics.recordRefusal(asGatewayError(err));
        next(err);
      },
    );
  };
}
