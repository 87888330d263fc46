/**
 * What went wrong talking to an upstream: the `kind` of `tollgate_upstream_errors_total`.
 * connect: refused or unreachable; timeout: no response headers in time; reset: closed before
 * answering; idle: the response body stalled past `idleTimeoutMs` and was cut.
 */
export const UPSTREAM_ERROR_KINDS = ['connect', 'timeout', 'reset', 'idle'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];

/**
 * Why a request was sent again to another target (`tollgate_upstream_retries_total{reason}`):
 * connect: it never reached a target; reset: a GET/HEAD cut before any answer; status: a GET/HEAD
 * answered 502/503/504, nothing of it relayed yet.
 */
export const UPSTREAM_RETRY_REASONS = ['connect', 'reset', 'status'] as const;
export type UpstreamRetryReason = (typeof UPSTREAM_RETRY_REASONS)[number];
