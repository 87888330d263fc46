/** What went wrong talking to an upstream: the `kind` of `tollgate_upstream_errors_total`. */
export const UPSTREAM_ERROR_KINDS = ['connect', 'timeout', 'reset'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];
