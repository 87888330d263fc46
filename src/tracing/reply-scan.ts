import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, jsonKey, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipJsonSpace } from '../metering/index.js';

/**
 * A JSON chat reply's `id` and each choice's `finish_reason`, read by walking its bytes rather
 * than parsing it whole: a traced request otherwise parses every reply a second time (the
 * metering tap reads usage and model its own way), for two small values. Only the top-level
 * `id` and the `finish_reason` of an object directly in the top-level `choices` array count,
 * whatever order the keys come in, as JSON.parse would read them.
 */

const ID = jsonKey('id');
const CHOICES = jsonKey('choices');
const FINISH_REASON = jsonKey('finish_reason');

/** The index just past the string whose opening quote is at `start`; -1 when it does not end. */
function stringEnd(bytes: Buffer, start: number): number {
  // indexOf skips a long string (a completion's content) far faster than a loop here would.
  for (let at = bytes.indexOf(QUOTE, start + 1); at !== -1; at = bytes.indexOf(QUOTE, at + 1)) {
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at + 1;
  }
  return -1;
}

/** Whether the string at [start, end), quotes included, is `key` (compared here: a key is a few bytes, less than a native call costs). */
function isKey(bytes: Buffer, start: number, end: number, key: Buffer): boolean {
  if (end - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (bytes[start + i] !== key[i]) return false;
  return true;
}

/** The string value at `at` (escapes decoded), or undefined when the value there is not a string. */
function stringAt(bytes: Buffer, at: number): string | undefined {
  if (bytes[at] !== QUOTE) return undefined;
  // Plain: no escape and no raw control character, so the bytes between the quotes are the string.
  let plain = true;
  for (let i = at + 1; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) return plain ? bytes.toString('utf8', at + 1, i) : decodedString(bytes, at, i + 1);
    if (byte === BACKSLASH) {
      plain = false;
      i++;
    } else if (byte < 0x20) plain = false;
  }
  return undefined;
}

/** A JSON string with escapes, as JSON.parse reads it (undefined where it refuses it). */
function decodedString(bytes: Buffer, start: number, end: number): string | undefined {
  try {
    return JSON.parse(bytes.toString('utf8', start, end)) as string;
  } catch {
    return undefined;
  }
}

/** What the scan reads: the id and finish reasons. The text stays empty: a reply is scanned only when its text is not wanted. */
export interface ScannedReply {
  readonly id?: string;
  readonly finishReasons: string[];
  readonly text: '';
}

/**
 * The reply's id and finish reasons; undefined when the bytes are not a JSON object (an SSE
 * stream, say). The result is made whole at the end, in the shape the reply's facts have: a
 * spread into that shape afterwards, or a delete of a missing id, cost more than the scan (~0.8 µs).
 */
export function scanJsonReply(bytes: Buffer): ScannedReply | undefined {
  let i = skipJsonSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) return undefined;
  let id: string | undefined;
  const finishReasons: string[] = [];
  let depth = 0;
  let inChoices = false;
  for (; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end === -1) break;
      const colon = skipJsonSpace(bytes, end);
      if (bytes[colon] === COLON) {
        const value = skipJsonSpace(bytes, colon + 1);
        // Duplicate keys: JSON.parse keeps the last value; so does this.
        if (depth === 1 && isKey(bytes, i, end, ID)) id = stringAt(bytes, value);
        else if (depth === 1 && isKey(bytes, i, end, CHOICES)) inChoices = bytes[value] === OPEN_BRACKET;
        else if (depth === 3 && inChoices && isKey(bytes, i, end, FINISH_REASON)) {
          const reason = stringAt(bytes, value);
          if (reason !== undefined) finishReasons.push(reason);
        }
      }
      i = end - 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
      if (depth < 2) inChoices = false;
    }
  }
  return id === undefined ? { finishReasons, text: '' } : { id, finishReasons, text: '' };
}
