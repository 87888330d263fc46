import { asGatewayError, ValidationError, writeError } from '../errors.js';
import type { Logger, Metrics } from '../observability/index.js';
import type { Exchange } from './exchange.js';

export interface FailureDeps {
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/**
 * The one way a /v1 request fails: any refusal (401, 403, 413, 422, 429, ...) or failure
 * (502, 504, 500) is rendered here, counted, and remembered for the log line.
 */
export function failExchange(exchange: Exchange, err: unknown, deps: FailureDeps): void {
  const error = asGatewayError(err);
  if (error.status === 500) deps.logger.error({ requestId: exchange.id, trace_id: exchange.trace?.traceId, err }, 'unhandled error');
  exchange.errorCode = error.code;
  exchange.trace?.refused(error);
  deps.metrics.recordRefusal(error);
  if (error instanceof ValidationError) exchange.metrics.validationFailures.inc();
  const { res } = exchange;
  if (!res.headersSent) {
    res.setHeader('x-request-id', exchange.id);
    // Refused before its body was read (an upload answered 401/429/413): close rather than
    // let Node read and discard what may be hundreds of MB still coming.
    if (!res.req.complete) res.setHeader('connection', 'close');
    // An admitted request that fails later (502/504/413) still tells the client where its limits stand.
    const admitted = exchange.admission?.headers;
    if (admitted) for (const name in admitted) res.setHeader(name, admitted[name]!);
  }
  writeError(res, error);
}
