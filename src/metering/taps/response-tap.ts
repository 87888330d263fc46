import { JsonTap } from './json-tap.js';
import { SseTap } from './sse-tap.js';
import { NOTHING_SEEN, type ResponseTap, type TapResult } from './tap.js';

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

/** For bodies that carry no usage the gateway can read. */
const passThrough: ResponseTap = Object.freeze({
  rewrites: false,
  write: (chunk: Buffer): Buffer => chunk,
  end: (): TapResult => NOTHING_SEEN,
});

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
