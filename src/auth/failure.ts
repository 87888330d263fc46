import { GatewayError } from '../errors.js';

/** Why authentication failed: the `reason` label of tollgate_auth_failures_total. */
export const AUTH_FAILURE_REASONS = ['missing', 'malformed', 'unknown_key', 'invalid_token', 'expired', 'disabled', 'revoked', 'admin_key', 'not_admin', 'throttled'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/** How a failure is answered: 401 with a Bearer challenge unless the reason says otherwise. */
const ANSWERS: Partial<Record<AuthFailureReason, { readonly status: number; readonly code: string }>> = {
  not_admin: { status: 403, code: 'admin_required' },
  // Too many failures from the client's address (SPEC 15): refused before any key is looked at.
  throttled: { status: 429, code: 'too_many_auth_failures' },
};
const UNAUTHORIZED = { status: 401, code: 'invalid_api_key' } as const;

/** A 401 (403 for a non-admin key on /admin, 429 for a throttled address) that also says why, for metrics. */
export class AuthFailure extends GatewayError {
  constructor(
    readonly reason: AuthFailureReason,
    message: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    const answer = ANSWERS[reason] ?? UNAUTHORIZED;
    super(answer.status, answer.code, message, answer === UNAUTHORIZED ? { 'www-authenticate': 'Bearer', ...headers } : headers);
  }
}
