import { ERROR_CATALOGUE, type ErrorEntry } from '../error-catalogue.js';
import { GatewayError } from '../errors.js';

/** Why authentication failed: the `reason` label of tollgate_auth_failures_total. */
export const AUTH_FAILURE_REASONS = ['missing', 'malformed', 'unknown_key', 'invalid_token', 'expired', 'disabled', 'revoked', 'admin_key', 'not_admin', 'session', 'oidc', 'throttled'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/** How a failure is answered: 401 with a Bearer challenge unless the reason says otherwise. */
const ANSWERS: Partial<Record<AuthFailureReason, ErrorEntry<[message: string]>>> = {
  not_admin: ERROR_CATALOGUE.adminRequired,
  // Too many failures from the client's address (SPEC 15): refused before any key is looked at.
  throttled: ERROR_CATALOGUE.tooManyAuthFailures,
};

/** A 401 (403 for a non-admin key on /admin, 429 for a throttled address) that also says why, for metrics. */
export class AuthFailure extends GatewayError {
  constructor(
    readonly reason: AuthFailureReason,
    message: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    const answer = ANSWERS[reason] ?? ERROR_CATALOGUE.invalidApiKey;
    // The message is the site's own: each reason words its failure (catalogue entries take it as given).
    super(answer.status, answer.code, answer.message(message), { ...answer.headers, ...headers });
  }
}
