import { GatewayError } from '../errors.js';

/** Why authentication failed: the `reason` label of tollgate_auth_failures_total. */
export const AUTH_FAILURE_REASONS = ['missing', 'malformed', 'unknown_key', 'invalid_token', 'expired', 'disabled', 'revoked', 'admin_key', 'not_admin'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/** A 401 (or 403 for a non-admin key on /admin) that also says why, for metrics. */
export class AuthFailure extends GatewayError {
  constructor(
    readonly reason: AuthFailureReason,
    message: string,
  ) {
    super(
      reason === 'not_admin' ? 403 : 401,
      reason === 'not_admin' ? 'admin_required' : 'invalid_api_key',
      message,
      reason === 'not_admin' ? {} : { 'www-authenticate': 'Bearer' },
    );
  }
}
