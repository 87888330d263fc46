import { detectJsonEncoding } from '../python-json/index.js';
import { skipJsonSpace } from './taps/json-scan.js';

const INSERTED = Buffer.from('"stream_options":{"include_usage":true},');
const OPEN_BRACE = 0x7b;

export interface ForcedBody {
  /** The bytes to send upstream. */
  bytes: Buffer;
  /** True when `include_usage` was added: the proxy then drops the usage-only event. */
  forced: boolean;
}

/**
 * Offset of the body's opening `{` (after JSON whitespace or a UTF-8 BOM), or -1 — also for a
 * body in UTF-16 or UTF-32, which Python reads too (../python-json/detect-encoding.ts): ASCII bytes
 * inserted there would break it.
 */
function openingBrace(raw: Buffer): number {
  const { encoding, start } = detectJsonEncoding(raw);
  if (encoding !== 'utf-8') return -1;
  const i = skipJsonSpace(raw, start);
  return raw[i] === OPEN_BRACE ? i : -1;
}

/**
 * Makes a streaming chat request ask the upstream for usage. `raw` is the body as the client
 * sent it and `body` its parse. When there is no `stream_options` key the member is inserted
 * right after the opening brace, so every other byte is forwarded as sent (SPEC 5: the
 * original bytes are forwarded, not a re-serialisation). Only an existing `stream_options`
 * without `include_usage: true` — rare — makes the body re-serialised, by `serialize`.
 */
export function forceStreamUsage(raw: Buffer, body: Record<string, unknown>, serialize: (value: unknown) => string = JSON.stringify): ForcedBody {
  if (body.stream !== true) return { bytes: raw, forced: false };
  const options = body.stream_options;
  const isObject = typeof options === 'object' && options !== null && !Array.isArray(options);
  if (isObject && (options as Record<string, unknown>).include_usage === true) return { bytes: raw, forced: false };
  if (!Object.hasOwn(body, 'stream_options')) {
    const brace = openingBrace(raw);
    if (brace !== -1) {
      return { bytes: Buffer.concat([raw.subarray(0, brace + 1), INSERTED, raw.subarray(brace + 1)]), forced: true };
    }
  }
  // Spreading keeps key order: stream_options stays where the client put it.
  const rewritten = { ...body, stream_options: { ...(isObject ? (options as object) : {}), include_usage: true } };
  return { bytes: Buffer.from(serialize(rewritten)), forced: true };
}
