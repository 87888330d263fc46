import type { ServerResponse } from 'node:http';
import type { Principal, ProjectRef } from '../auth/index.js';
import type { Admission } from '../limits/index.js';
import type { TapResult } from '../metering/index.js';
import type { RouteMetrics } from '../observability/index.js';
import type { ForwardHandle, RouteSpec } from '../proxy/index.js';
import type { PreparedBody } from './body.js';

/** Who is calling and for which team/project: the first two steps' result. */
export interface Caller {
  readonly principal: Principal;
  readonly project: ProjectRef;
}

/** What the chat body step learned: the model asked for and what to reserve for it. */
export interface ChatTerms {
  readonly model: string;
  /** Prompt estimate plus completion budget (SPEC 6.3). */
  readonly estimatedTokens: number;
  /** The prompt part of it, ceil(prompt characters / 4): what an unfinished stream is charged for its prompt. */
  readonly promptTokens: number;
}

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

  constructor(
    readonly id: string,
    readonly route: RouteSpec,
    readonly method: string,
    readonly res: ServerResponse,
    /** This route's metric series, looked up once per request. */
    readonly metrics: RouteMetrics,
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
