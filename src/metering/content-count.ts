const CONTENT_KEY = Buffer.from('"content"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

const isJsonSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/**
 * Bytes of generated text in one SSE chunk: the length of the first `"content"` string value
 * (its raw JSON bytes, escapes included — an estimate, never parsed), or 0 when the chunk
 * carries none. What an aborted stream is charged by when it never got to its usage chunk.
 */
export function contentBytes(event: Buffer): number {
  let at = event.indexOf(CONTENT_KEY);
  while (at !== -1) {
    let i = at + CONTENT_KEY.length;
    while (isJsonSpace(event[i])) i++;
    if (event[i] === COLON) {
      i++;
      while (isJsonSpace(event[i])) i++;
      if (event[i] !== QUOTE) return 0;
      const start = i + 1;
      for (let j = start; j < event.length; j++) {
        const byte = event[j];
        if (byte === BACKSLASH) j++;
        else if (byte === QUOTE) return j - start;
      }
      return event.length - start;
    }
    at = event.indexOf(CONTENT_KEY, i);
  }
  return 0;
}
