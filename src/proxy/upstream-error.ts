/**
 * What went wrong talking to an upstream: the `kind` of `tollgate_upstream_errors_total`.
 * connect: refused or unreachable; timeout: no response headers in time; reset: closed before
 * answering; idle: the response body stalled past `idleTimeoutMs` and was cut.
 */
export const UPSTREAM_ERROR_KINDS = ['connect', 'timeout', 'reset', 'idle'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];
