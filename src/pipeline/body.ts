import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/index.js';
import { ValidationError } from '../errors.js';
import { assertDeclaredLength, BodyLimitCounter, BufferBudget, BufferedBody, readBody, type RouteSpec } from '../proxy/index.js';
import type { ChatBodyChecker } from '../validation/index.js';
import type { PreparedBody } from './values.js';

export type { PreparedBody } from './values.js';

const NOTHING_HELD = (): void => undefined;
const NO_BODY: PreparedBody = { open: () => undefined, release: NOTHING_HELD, bytes: 0 };

/** The settings the body steps read, taken from config once; the shared memory budget and chat checker. */
export interface BodySettings {
  readonly bodyLimit: number;
  readonly streamBodyLimit: number;
  readonly idleMs: number;
  readonly budget: BufferBudget;
  /** Validates a chat body, estimates its tokens and forces stream usage (off the event loop when costly). */
  readonly checker: ChatBodyChecker;
}

export function bodySettings(config: Pick<Config, 'server'>, budget: BufferBudget, checker: ChatBodyChecker): BodySettings {
  return {
    bodyLimit: config.server.bodyLimit,
    streamBodyLimit: config.server.streamBodyLimit,
    idleMs: config.server.bodyIdleTimeoutMs,
    budget,
    checker,
  };
}

/** Reads a request's body as its route needs it; chosen once per route when its chain is built. */
export type BodyReader = (req: IncomingMessage) => Promise<PreparedBody>;

/**
 * The body reader for a route, from its spec (`chat`, `json`, `stream` or `none`); readers throw
 * 413 or 422. A `json` body is read whole only when a later step of the chain looks into it
 * (`inspected`: ownership on); otherwise it streams like any upload, under `streamBodyLimit`.
 */
export function bodyReaderFor(route: RouteSpec, settings: BodySettings, inspected: boolean): BodyReader {
  const kind = route.body === 'json' && !inspected ? 'stream' : route.body;
  switch (kind) {
    case 'chat':
      return (req) => prepareChatBody(req, settings);
    case 'json':
      return (req) => bufferedBody(req, settings);
    case 'stream':
      return (req) => {
        // A declared length over the limit is refused before the limits are charged.
        assertDeclaredLength(req, settings.streamBodyLimit);
        return Promise.resolve(streamedBody(req, settings));
      };
    case 'none':
      return () => Promise.resolve(NO_BODY);
  }
}

/**
 * A chat body: read whole, validated as the backend would (422), and forwarded as the
 * original bytes — plus `include_usage` when the gateway must meter a stream that did not ask.
 * An ordinary body is checked right here; a costly one (large, deeply nested) in a worker, so
 * no body holds up the other requests.
 */
async function prepareChatBody(req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  const { bytes: raw, release } = await readBody(req, { limit: settings.bodyLimit, idleMs: settings.idleMs, budget: settings.budget, sharedAbove: settings.checker.inlineMaxBytes });
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
  return {
    chat: { model: facts.model, estimatedTokens: facts.estimatedTokens, promptTokens: Math.ceil(facts.promptChars / 4), usageForced: facts.usageForced, sampling: facts.sampling },
    // Usage is read from the response body: it must arrive uncompressed to be metered. The
    // parser consumed the client's stream: the bytes are re-sent with their exact length (a
    // chunked request's transfer-encoding, hop-by-hop, is dropped when forwarding).
    headers: { 'accept-encoding': 'identity', 'content-length': String(facts.forwardBytes.length) },
    forwardBytes: facts.forwardBytes,
    open: () => new BufferedBody(facts.forwardBytes),
    // The client's bytes, for a trace's gen_ai.request.* (read only when a span records).
    raw,
    release,
    bytes: raw.length,
  };
}

/** A small body read whole for a later step (a model creation's name), forwarded as its original bytes. */
async function bufferedBody(req: IncomingMessage, settings: BodySettings): Promise<PreparedBody> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return NO_BODY;
  const { bytes, release } = await readBody(req, { limit: settings.bodyLimit, idleMs: settings.idleMs, budget: settings.budget });
  return { raw: bytes, headers: { 'content-length': String(bytes.length) }, open: () => new BufferedBody(bytes), release, bytes: bytes.length };
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
    release: NOTHING_HELD,
    get bytes() {
      return counter?.bytes ?? 0;
    },
  };
}
