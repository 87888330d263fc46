/*
 * Looking into JSON bytes without parsing them: where a key's value starts, where a string or
 * object value ends. Inside a JSON string every quote is escaped, so an unescaped `"name"`
 * followed by `:` is a key — never text that happens to quote the name.
 */

/** The bytes of JSON's structure, for the scans here and the tracer's reply scan. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

const isJsonSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** The first index at or after `i` that is not JSON whitespace (`bytes.length` when none is). */
export function skipJsonSpace(bytes: Buffer, i: number): number {
  while (isJsonSpace(bytes[i])) i++;
  return i;
}

/** A key as the scans below look for it: `"name"`, quotes included. */
export const jsonKey = (name: string): Buffer => Buffer.from(`"${name}"`);

/**
 * Where the value starts when `key` found at `at` is a key (a colon follows; no backslash
 * before, which would make its quote an escaped one inside a string), else -1.
 */
function valueAfterKey(bytes: Buffer, key: Buffer, at: number): number {
  if (at > 0 && bytes[at - 1] === BACKSLASH) return -1;
  const colon = skipJsonSpace(bytes, at + key.length);
  return bytes[colon] === COLON ? skipJsonSpace(bytes, colon + 1) : -1;
}

/** Where the value of the first `key` at or after `from` starts (after the colon and any whitespace); -1 when there is none. */
export function nextKeyValue(bytes: Buffer, key: Buffer, from = 0): number {
  for (let at = bytes.indexOf(key, from); at !== -1; at = bytes.indexOf(key, at + 1)) {
    const value = valueAfterKey(bytes, key, at);
    if (value !== -1) return value;
  }
  return -1;
}

/** Where the value of the last `key` starts; -1 when there is none. */
export function lastKeyValue(bytes: Buffer, key: Buffer): number {
  // lastIndexOf with a negative offset would count from the end again: stop at 0.
  for (let at = bytes.lastIndexOf(key); at !== -1; at = at === 0 ? -1 : bytes.lastIndexOf(key, at - 1)) {
    const value = valueAfterKey(bytes, key, at);
    if (value !== -1) return value;
  }
  return -1;
}

/** The end (exclusive) of the JSON object or string starting at `start`, or -1 when it does not end in `bytes`. */
export function valueEnd(bytes: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE) depth += 1;
    else if (byte === CLOSE_BRACE) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
