import type { IncomingMessage } from 'node:http';
import type { Stream } from 'node:stream';
import type { Config } from '../config/index.js';
import { ValidationError } from '../errors.js';
import { createResponseTap, type ResponseTap } from '../metering/index.js';
import { assertDeclaredLength, BodyLimitCounter, BufferBudget, BufferedBody, readBody, type RouteSpec } from '../proxy/index.js';
import type { ChatBodyChecker } from '../validation/index.js';
import type { ChatTerms } from './exchange.js';

/** What the request carries upstream once the gateway has looked at its body. */
export interface PreparedBody {
  /** What the chat body said (model, tokens to reserve); absent for other routes. */
  readonly chat?: ChatTerms;
  /** The whole body, for a route that reads it (`json`): what later steps look into. */
  readonly raw?: Buffer;
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
  /** Bytes of the request body the gateway read or streamed (the ledger's request_bytes). */
  readonly bytes: number;
}

const NO_TAP = (): undefined => undefined;
const NOTHING_HELD = (): void => undefined;
const NO_BODY: PreparedBody = { open: () => undefined, tap: NO_TAP, release: NOTHING_HELD, bytes: 0 };

/** The settings the body steps read, taken from config once; the shared memory budget and chat checker. */
export interface BodySettings {
  readonly bodyLimit: number;
  readonly streamBodyLimit: number;
  readonly idleMs: number;
  readonly budget: BufferBudget;
  /** Validates a chat body, estimates its tokens and forces stream usage (off the event loop when costly). */
  readonly checker: ChatBodyChecker;
}

export function bodySettings(config: Config, budget: BufferBudget, checker: ChatBodyChecker): BodySettings {
  return {
    bodyLimit: config.server.bodyLimit,
    streamBodyLimit: config.server.streamBodyLimit,
    idleMs: config.server.bodyIdleTimeoutMs,
    budget,
    checker,
  };
}

/**
 * Reads the route's body as its spec says (`chat`, `json`, `stream` or `none`); throws 413 or
 * 422. A `json` body is read whole only for a step that looks into it (`inspected`: ownership
 * on); otherwise it streams like any upload, under `streamBodyLimit`.
 */
export async function prepareBody(route: RouteSpec, req: IncomingMessage, settings: BodySettings, inspected: boolean): Promise<PreparedBody> {
  const kind = route.body === 'json' && !inspected ? 'stream' : route.body;
  switch (kind) {
    case 'chat':
      return prepareChatBody(req, settings);
    case 'json':
      return bufferedBody(req, settings);
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
 * An ordinary body is checked right here; a costly one (large, deeply nested) in a worker, so
 * no body holds up the other requests.
 */
async function prepareChatBody(req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  const { bytes: raw, release } = await readBody(req, { limit: settings.bodyLimit, idleMs: settings.idleMs, budget: settings.budget });
  let check;
  try {
    check = settings.checker.check(raw, req.headers['content-type']);
    if (check instanceof Promise) check = await check;
  } catch (err) {
    release();
    throw err;
  }
  if (!check.ok) {
    release();
    throw new ValidationError(check.body);
  }
  const { facts } = check;
  // Usage is read from the response body: it must arrive uncompressed to be metered.
  req.headers['accept-encoding'] = 'identity';
  // The parser consumed the client's stream: re-send the bytes with their exact length (a
  // chunked request's transfer-encoding, hop-by-hop, is dropped when forwarding).
  req.headers['content-length'] = String(facts.forwardBytes.length);
  return {
    chat: { model: facts.model, estimatedTokens: facts.estimatedTokens, promptTokens: Math.ceil(facts.promptChars / 4) },
    open: () => new BufferedBody(facts.forwardBytes),
    tap: (upstreamResponse) =>
      createResponseTap(upstreamResponse.headers['content-type'], {
        dropUsageChunk: facts.usageForced,
        contentEncoding: upstreamResponse.headers['content-encoding'],
      }),
    release,
    bytes: raw.length,
  };
}

/** A small body read whole for a later step (a model creation's name), forwarded as its original bytes. */
async function bufferedBody(req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return NO_BODY;
  const { bytes, release } = await readBody(req, { limit: settings.bodyLimit, idleMs: settings.idleMs, budget: settings.budget });
  req.headers['content-length'] = String(bytes.length);
  return { raw: bytes, open: () => new BufferedBody(bytes), tap: NO_TAP, release, bytes: bytes.length };
}

/** An upload (can be hundreds of MB): streamed through, counted, never buffered. */
function streamedBody(req: IncomingMessage, settings: BodySettings): PreparedBody {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return NO_BODY;
  let counter: BodyLimitCounter | undefined;
  return {
    open(onError) {
      counter = new BodyLimitCounter(settings.streamBodyLimit, settings.idleMs, req);
      counter.once('error', onError);
      req.pipe(counter);
      return counter;
    },
    tap: NO_TAP,
    release: NOTHING_HELD,
    get bytes() {
      return counter?.bytes ?? 0;
    },
  };
}
