import { jsonKey, nextKeyValue } from './json-scan.js';

const CONTENT_KEY = jsonKey('content');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Bytes of generated text in one SSE chunk: the length of the first `"content"` string value
 * (its raw JSON bytes, escapes included — an estimate, never parsed), or 0 when the chunk
 * carries none. What an aborted stream is charged by when it never got to its usage chunk.
 */
export function contentBytes(event: Buffer): number {
  const i = nextKeyValue(event, CONTENT_KEY);
  if (i === -1 || event[i] !== QUOTE) return 0;
  const start = i + 1;
  for (let j = start; j < event.length; j++) {
    const byte = event[j];
    if (byte === BACKSLASH) j++;
    else if (byte === QUOTE) return j - start;
  }
  return event.length - start;
}
