import type { Stream } from 'node:stream';
import type { Principal, ProjectRef } from '../auth/index.js';
import type { ChatSampling } from '../validation/index.js';

/**
 * The values the steps of a /v1 request hand each other. Each is returned by one step and
 * never changed afterwards; the exchange keeps them for completion (settle, meter, log).
 */

/** Who is calling and for which team/project: the identify step's result. */
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
  /** The gateway asked the upstream for a usage chunk the client did not ask for: the tap drops it (SPEC 6.4). */
  readonly usageForced: boolean;
  /** The body's sampling settings, for a trace's `gen_ai.request.*`. */
  readonly sampling: ChatSampling;
}

/** What the request carries upstream once the gateway has looked at its body. */
export interface PreparedBody {
  /** What the chat body said (model, tokens to reserve); absent for other routes. */
  readonly chat?: ChatTerms;
  /** A chat's bytes as they go upstream (include_usage added when forced): what a model rewrite edits. */
  readonly forwardBytes?: Buffer;
  /** The whole body, for a route that reads it (`json`): what later steps look into. */
  readonly raw?: Buffer;
  /**
   * Request headers the upstream must get in place of the client's because the gateway read
   * the body (its exact length once re-sent, `identity` encoding for a reply it meters).
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The stream to send upstream in place of the client's, made when the request is forwarded
   * (an upload starts flowing only once it is admitted). `onError` hears a body that grows
   * past its limit on the way. Undefined: the client's own stream goes as it is.
   */
  open(onError: (err: Error) => void): Stream | undefined;
  /** Gives back the memory budget a buffered body holds (called when the exchange is over). */
  release(): void;
  /** Bytes of the request body the gateway read or streamed (the ledger's request_bytes). */
  readonly bytes: number;
}
