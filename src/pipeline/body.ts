import type { IncomingMessage } from 'node:http';
import type { Stream } from 'node:stream';
import type { Config } from '../config/index.js';
import { ValidationError } from '../errors.js';
import { createResponseTap, forceStreamUsage, type ResponseTap } from '../metering/index.js';
import { assertDeclaredLength, BodyLimitCounter, BufferBudget, BufferedBody, readBody, type RouteSpec } from '../proxy/index.js';
import { renderValidationBody, validateChatBody } from '../validation/index.js';
import type { ChatTerms } from './exchange.js';
import { estimateChatTokens } from './token-estimate.js';

/** What the request carries upstream once the gateway has looked at its body. */
export interface PreparedBody {
  /** What the chat body said (model, tokens to reserve); absent for other routes. */
  readonly chat?: ChatTerms;
  /**
   * The stream to send upstream in place of the client's, made when the request is forwarded
   * (an upload starts flowing only once it is admitted). `onError` hears a body that grows
   * past its limit on the way. Undefined: the client's own stream goes as it is.
   */
  open(onError: (err: Error) => void): Stream | undefined;
  /** The metering tap for a 200 response of this request, if any. */
  tap(upstreamResponse: IncomingMessage): ResponseTap | undefined;
  /** Gives back the memory budget a buffered body holds (called when the exchange is over). */
  release(): void;
}

const NO_TAP = (): undefined => undefined;
const NOTHING_HELD = (): void => undefined;
const NO_BODY: PreparedBody = { open: () => undefined, tap: NO_TAP, release: NOTHING_HELD };

/** The settings the body steps read, taken from config once, and the shared memory budget. */
export interface BodySettings {
  readonly bodyLimit: number;
  readonly streamBodyLimit: number;
  readonly idleMs: number;
  readonly budget: BufferBudget;
  readonly defaultCompletionTokens: number;
  readonly forceStreamUsage: boolean;
}

export function bodySettings(config: Config, budget: BufferBudget): BodySettings {
  return {
    bodyLimit: config.server.bodyLimit,
    streamBodyLimit: config.server.streamBodyLimit,
    idleMs: config.server.bodyIdleTimeoutMs,
    budget,
    defaultCompletionTokens: config.rateLimits.defaultCompletionTokens,
    forceStreamUsage: config.metering.forceStreamUsage,
  };
}

/** Reads the route's body as its spec says (`chat`, `stream` or `none`); throws 413 or 422. */
export async function prepareBody(route: RouteSpec, req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  switch (route.body) {
    case 'chat':
      return prepareChatBody(req, settings);
    case 'stream':
      // A declared length over the limit is refused before the limits are charged.
      assertDeclaredLength(req, settings.streamBodyLimit);
      return streamedBody(req, settings);
    case 'none':
      return NO_BODY;
  }
}

/**
 * A chat body: read whole, validated as the backend would (422), and forwarded as the
 * original bytes — plus `include_usage` when the gateway must meter a stream that did not ask.
 */
async function prepareChatBody(req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  const { bytes: raw, release } = await readBody(req, { limit: settings.bodyLimit, idleMs: settings.idleMs, budget: settings.budget });
  const validation = validateChatBody(raw, req.headers['content-type']);
  if (!validation.ok) {
    release();
    throw new ValidationError(renderValidationBody(validation.detail));
  }
  const { bytes, forced } = settings.forceStreamUsage ? forceStreamUsage(raw, validation.body) : { bytes: raw, forced: false };
  // Usage is read from the response body: it must arrive uncompressed to be metered.
  req.headers['accept-encoding'] = 'identity';
  // The parser consumed the client's stream: re-send the original bytes with their exact length
  // (a chunked request's transfer-encoding, hop-by-hop, is dropped when forwarding).
  req.headers['content-length'] = String(bytes.length);
  const { estimatedTokens, promptChars } = estimateChatTokens(validation.body, settings.defaultCompletionTokens);
  return {
    chat: { model: validation.body.model, estimatedTokens, promptTokens: Math.ceil(promptChars / 4) },
    open: () => new BufferedBody(bytes),
    tap: (upstreamResponse) =>
      createResponseTap(upstreamResponse.headers['content-type'], { dropUsageChunk: forced, contentEncoding: upstreamResponse.headers['content-encoding'] }),
    release,
  };
}

/** An upload (can be hundreds of MB): streamed through, counted, never buffered. */
function streamedBody(req: IncomingMessage, settings: BodySettings): PreparedBody {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return NO_BODY;
  return {
    open(onError) {
      const counter = new BodyLimitCounter(settings.streamBodyLimit, settings.idleMs, req);
      counter.once('error', onError);
      req.pipe(counter);
      return counter;
    },
    tap: NO_TAP,
    release: NOTHING_HELD,
  };
}
