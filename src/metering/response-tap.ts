import { SseTap } from './sse-tap.js';
import { parseJsonOrUndefined, readModel, readUsage, type Usage } from './usage.js';

/** What a tap saw once the upstream response ended. */
export interface TapResult {
  /** Bytes still held back that the client must still get (null: nothing). */
  tail: Buffer | null;
  usage: Usage | null;
  model: string | null;
}

/** Sits on the upstream response body while the proxy relays it chunk by chunk. */
export interface ResponseTap {
  /** May this tap change the bytes (drop the forced usage event)? If not, Content-Length stays valid. */
  readonly rewrites: boolean;
  /** Returns the bytes to send to the client for this upstream chunk (the same Buffer when unchanged — no copy on the common path). */
  write(chunk: Buffer): Buffer;
  /** Upstream ended; returns any bytes still held back (usually empty) and the usage seen, or null. */
  end(): TapResult;
}

export interface ResponseTapOptions {
  /** Cut the usage-only event out of an SSE stream (the gateway forced `include_usage`). */
  dropUsageChunk: boolean;
  /** A JSON reply larger than this is relayed but not metered (default 8 MiB). */
  maxJsonBytes?: number;
  /** An SSE event larger than this is relayed as it comes, not inspected (default 1 MiB). */
  maxEventBytes?: number;
  /** The upstream Content-Encoding: compressed bodies are relayed untouched and not metered. */
  contentEncoding?: string;
}

const DEFAULT_MAX_JSON_BYTES = 8 * 1024 ** 2;
const DEFAULT_MAX_EVENT_BYTES = 1024 ** 2;
const NOTHING: TapResult = Object.freeze({ tail: null, usage: null, model: null });

/** For bodies that carry no usage the gateway can read. */
const passThrough: ResponseTap = Object.freeze({
  rewrites: false,
  write: (chunk: Buffer): Buffer => chunk,
  end: (): TapResult => NOTHING,
});

/** Keeps references to a non-stream reply's chunks (up to a bound) and parses them once at the end. */
class JsonTap implements ResponseTap {
  readonly rewrites = false;
  private chunks: Buffer[] | null = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  write(chunk: Buffer): Buffer {
    if (this.chunks !== null) {
      this.bytes += chunk.length;
      if (this.bytes > this.maxBytes) this.chunks = null;
      else this.chunks.push(chunk);
    }
    return chunk;
  }

  end(): TapResult {
    const chunks = this.chunks;
    this.chunks = null;
    if (chunks === null || chunks.length === 0) return NOTHING;
    // Most replies arrive in one chunk: decode it in place rather than concat a copy first.
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bytes);
    const reply = parseJsonOrUndefined(body.toString('utf8'));
    if (typeof reply !== 'object' || reply === null) return NOTHING;
    return { tail: null, usage: readUsage((reply as Record<string, unknown>).usage), model: readModel(reply) };
  }
}

const mediaTypeOf = (contentType: string | undefined): string =>
  (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();

/**
 * Picks the tap for an upstream response by its Content-Type: `application/json` (and
 * `application/*+json`) replies, `text/event-stream` streams; anything else passes through
 * unmetered.
 */
export function createResponseTap(contentType: string | undefined, options: ResponseTapOptions): ResponseTap {
  const encoding = options.contentEncoding?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return passThrough;
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === 'text/event-stream') {
    return new SseTap(options.dropUsageChunk, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
  }
  if (mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))) {
    return new JsonTap(options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES);
  }
  return passThrough;
}
