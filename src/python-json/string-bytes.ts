/*
 * Sizes of strings as JSON.stringify writes them (which is what Python's ensure_ascii=False
 * encoder writes), in UTF-8 bytes, without building the text: a 422 echo budget must be able
 * to turn down an 8 MB string without copying it.
 */

/** UTF-8 bytes of the character at `i` once escaped, and how many UTF-16 units it spans. */
function escapedCharBytes(s: string, i: number): [bytes: number, units: number] {
  const c = s.charCodeAt(i);
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? [2, 1] : [6, 1];
  if (c === 0x22 || c === 0x5c) return [2, 1];
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return [4, 2];
  }
  // A lone surrogate is written as a \uXXXX escape.
  if (c >= 0xd800 && c <= 0xdfff) return [6, 1];
  return [3, 1];
}

/**
 * Bytes of JSON.stringify(s) in UTF-8 when they are at most `max`, else Infinity. Every unit
 * takes at least one byte, so a string longer than `max` is refused without being read.
 */
export function jsonStringBytesWithin(s: string, max: number): number {
  if (s.length + 2 > max) return Number.POSITIVE_INFINITY;
  let bytes = 2;
  for (let i = 0; i < s.length; ) {
    const [charBytes, units] = escapedCharBytes(s, i);
    bytes += charBytes;
    if (bytes > max) return Number.POSITIVE_INFINITY;
    i += units;
  }
  return bytes;
}

/** The marker ending a cut string, and standing for left-out values (U+2026, 3 UTF-8 bytes). */
export const ELLIPSIS = '\u2026';

/**
 * The JSON text of the longest prefix of `s` followed by `…` that takes at most `max` bytes
 * (at least 5: the quotes and the marker). Never splits a surrogate pair.
 */
export function cutJsonString(s: string, max: number): { text: string; bytes: number } {
  let bytes = 5;
  let end = 0;
  while (end < s.length) {
    const [charBytes, units] = escapedCharBytes(s, end);
    if (bytes + charBytes > max) break;
    bytes += charBytes;
    end += units;
  }
  return { text: JSON.stringify(s.slice(0, end) + ELLIPSIS), bytes };
}
