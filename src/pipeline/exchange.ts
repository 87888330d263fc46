import type { ServerResponse } from 'node:http';
import type { Principal, ProjectRef } from '../auth/index.js';
import type { Admission } from '../limits/index.js';
import type { Usage } from '../metering/index.js';
import type { RouteMetrics } from '../observability/index.js';
import type { ForwardHandle, RouteSpec } from '../proxy/index.js';

/**
 * Everything the gateway learns about one /v1 request as it moves through the pipeline.
 * Each step fills in its part; `complete` reads it once the response is over.
 */
export class Exchange {
  readonly startedAt = performance.now();
  principal?: Principal;
  project?: ProjectRef;
  model?: string;
  admission?: Admission;
  /** Tokens reserved before forwarding (chat only). */
  estimatedTokens = 0;
  usage: Usage | null = null;
  /** The model the upstream says answered (may differ from the requested alias). */
  usageModel?: string;
  /** Set when the request left for the upstream (overhead ends here). */
  sentAt?: number;
  /** Set when upstream response headers arrived. */
  respondedAt?: number;
  /** The forwarded upstream request, while there is one. */
  upstream?: ForwardHandle;
  /** The upstream body was relayed to the end. */
  completed = false;
  errorCode?: string;

  constructor(
    readonly id: string,
    readonly route: RouteSpec,
    readonly method: string,
    readonly res: ServerResponse,
    /** This route's metric children, looked up once per request. */
    readonly metrics: RouteMetrics,
  ) {}

  /** The status the client saw; 499 (nginx's "client closed request") when it left before any. */
  get status(): number {
    return this.res.headersSent ? this.res.statusCode : 499;
  }

  /** Total tokens to settle the reservation to: what the upstream reported, else nothing used. */
  get usedTokens(): number {
    return this.usage?.total_tokens ?? 0;
  }
}
