import type { ServerResponse } from 'node:http';
import type { Principal, ProjectRef } from '../auth/index.js';
import type { Admission } from '../limits/index.js';
import type { Usage } from '../metering/index.js';
import type { RouteMetrics } from '../observability/index.js';
import type { ForwardHandle, RouteSpec } from '../proxy/index.js';

/** Who is calling and for which team/project: the first two steps' result. */
export interface Caller {
  readonly principal: Principal;
  readonly project: ProjectRef;
}

/** What the chat body step learned: the model asked for and the tokens to reserve. */
export interface ChatTerms {
  readonly model: string;
  readonly estimatedTokens: number;
}

/** The request's trip upstream, from the moment it left. */
export interface UpstreamLeg {
  /** When the request left for the upstream (overhead ends here). */
  readonly sentAt: number;
  handle: ForwardHandle;
  /** When the upstream's response headers arrived. */
  respondedAt?: number;
  /** The upstream body was relayed to its end. */
  completed: boolean;
  usage: Usage | null;
  /** The model the upstream says answered (may differ from the requested alias). */
  usageModel?: string;
}

/**
 * The summary of one /v1 request, assembled for completion (settle, meter, log) as the
 * pipeline's steps return: each field is the typed result of one step, set once by the
 * handler, and absent when the request never got that far.
 */
export class Exchange {
  readonly startedAt = performance.now();
  caller?: Caller;
  chat?: ChatTerms;
  /** Gives back what the prepared body holds (its share of the buffered-bytes budget). */
  releaseBody?: () => void;
  admission?: Admission;
  leg?: UpstreamLeg;
  /** The code of the refusal or failure that answered it (for the log line). */
  errorCode?: string;

  constructor(
    readonly id: string,
    readonly route: RouteSpec,
    readonly method: string,
    readonly res: ServerResponse,
    /** This route's metric series, looked up once per request. */
    readonly metrics: RouteMetrics,
  ) {}

  /** The status the client saw; 499 (nginx's "client closed request") when it left before any. */
  get status(): number {
    return this.res.headersSent ? this.res.statusCode : 499;
  }

  /** Total tokens to settle the reservation to: what the upstream reported, else nothing used. */
  get usedTokens(): number {
    return this.leg?.usage?.total_tokens ?? 0;
  }
}
