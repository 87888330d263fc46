import type { ServerResponse } from 'node:http';
import type { Admission } from '../limits/index.js';
import type { TapResult } from '../metering/index.js';
import type { RouteMetrics } from '../observability/index.js';
import type { ForwardHandle, RouteSpec } from '../proxy/index.js';
import type { RequestTrace } from '../tracing/index.js';
import type { ModelRoute } from '../models/index.js';
import type { Caller, ChatTerms, PreparedBody } from './values.js';

export type { Caller, ChatTerms } from './values.js';

/** The request's trip upstream, from the moment it left. */
export interface UpstreamLeg {
  /** When the request left for the upstream (overhead ends here). */
  readonly sentAt: number;
  handle: ForwardHandle;
  /** When the upstream's response headers arrived. */
  respondedAt?: number;
  /** The status the upstream answered with (once its headers came). */
  upstreamStatus?: number;
  /** The upstream body was relayed to its end. */
  completed: boolean;
  /** What the metering tap read from the reply (usage, model, text relayed), once the relay is over. */
  seen?: TapResult;
}

/**
 * The summary of one /v1 request, assembled for completion (settle, meter, log) as the
 * pipeline's steps return: each field is the typed result of one step, set once by the
 * handler, and absent when the request never got that far.
 */
export class Exchange {
  readonly startedAt = performance.now();
  /** Wall-clock arrival (the ledger's `at`). */
  readonly arrivedAt = Date.now();
  caller?: Caller;
  /** What the body step prepared: chat terms, the stream to send, its size and budget share. */
  body?: PreparedBody;
  admission?: Admission;
  leg?: UpstreamLeg;
  /** The code of the refusal or failure that answered it (for the log line). */
  errorCode?: string;
  /** Where its chat went (SPEC 22): the model asked for, the model and upstream it resolved to. */
  modelRoute?: ModelRoute;
  /** The model a fallback replaced, when one did (SPEC 22). */
  fallbackFrom?: string;
  /** Its spans, when tracing is on (nothing is built for a request otherwise). */
  trace: RequestTrace | undefined = undefined;

  constructor(
    readonly id: string,
    readonly route: RouteSpec,
    readonly method: string,
    readonly res: ServerResponse,
    /** This route's metric series, looked up once per request (again if a model route or fallback sends it to another upstream). */
    public metrics: RouteMetrics,
  ) {}

  /** What the chat body said (model, tokens to reserve); undefined for other routes or before the body was read. */
  get chat(): ChatTerms | undefined {
    return this.body?.chat;
  }

  /** The status the client saw; 499 (nginx's "client closed request") when it left before any. */
  get status(): number {
    return this.res.headersSent ? this.res.statusCode : 499;
  }
}
