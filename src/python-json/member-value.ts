/*
 * Replaces the value of one top-level member of a JSON object, leaving every other byte as it
 * was: the member Python's json.loads keeps (the last of duplicate keys, a key read with its
 * escapes). Used to forward a chat under another model name (SPEC 22). Works on UTF-8 bytes:
 * in UTF-8 no byte of a multi-byte character is ASCII, so structure is found byte by byte.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isWhitespace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipWhitespace(b: Uint8Array, i: number): number {
  while (isWhitespace(b[i])) i += 1;
  return i;
}

/** `i` at an opening quote: the index past its closing quote. */
function stringEnd(b: Uint8Array, i: number): number {
  for (i += 1; i < b.length; i += 1) {
    if (b[i] === BACKSLASH) i += 1;
    else if (b[i] === QUOTE) return i + 1;
  }
  return -1;
}

/** `i` at a value's first byte: the index past it (nested values skipped by depth). */
function valueEnd(b: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < b.length; i += 1) {
    const c = b[i]!;
    if (c === QUOTE) {
      i = stringEnd(b, i) - 1;
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth += 1;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 0) return i;
      depth -= 1;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || isWhitespace(c))) return i;
  }
  return depth === 0 ? i : -1;
}

/** The key a member's quoted bytes stand for, escapes read as Python reads them. */
function keyOf(b: Buffer, start: number, end: number): string {
  const text = b.toString('utf8', start, end);
  return text.includes('\\') ? (JSON.parse(text) as string) : text.slice(1, -1);
}

/** Where the value of the last top-level member `key` is in UTF-8 `b`, or undefined. */
function lastMemberValue(b: Buffer, key: string): { start: number; end: number } | undefined {
  let found: { start: number; end: number } | undefined;
  let i = skipWhitespace(b, 0);
  if (b[i] !== OPEN_OBJECT) return undefined;
  i = skipWhitespace(b, i + 1);
  while (b[i] === QUOTE) {
    const keyEnd = stringEnd(b, i);
    if (keyEnd < 0) return undefined;
    const name = keyOf(b, i, keyEnd);
    i = skipWhitespace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    const start = skipWhitespace(b, i + 1);
    const end = valueEnd(b, start);
    if (end < 0) return undefined;
    if (name === key) found = { start, end };
    i = skipWhitespace(b, end);
    if (b[i] !== COMMA) break;
    i = skipWhitespace(b, i + 1);
  }
  return found;
}

/**
 * UTF-8 `bytes` (one JSON object, valid as json.loads reads it, no BOM) with its top-level
 * member `key` set to the string `value`; every other byte unchanged. Undefined when the object
 * has no such member.
 */
export function withTopLevelString(bytes: Buffer, key: string, value: string): Buffer | undefined {
  const at = lastMemberValue(bytes, key);
  if (at === undefined) return undefined;
  return Buffer.concat([bytes.subarray(0, at.start), Buffer.from(JSON.stringify(value)), bytes.subarray(at.end)]);
}
