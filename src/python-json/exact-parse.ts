/*
 * When JSON.parse's value can stand for Python's. A 422 echoes inputs as Python's json.loads
 * holds them, and JSON.parse's value differs in three ways only: floats written as integers
 * (`1.0`, `1e5`: JS cannot tell them from ints), integers past 2^53, and object keys that look
 * like array indices (JS objects move them first). A body with none of those renders the same
 * from either, and skips the Python-faithful decoder, which takes several times JSON.parse's
 * time and memory.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const COLON = 0x3a;
/** Integers of up to 15 digits are exact as doubles. */
const MAX_EXACT_DIGITS = 15;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

/** Whether the string ending at `close` is an object key whose place JS would move (or might: escapes). */
function isMovableKey(text: string, open: number, close: number): boolean {
  let next = close + 1;
  while (next < text.length && text.charCodeAt(next) <= 0x20) next++;
  if (text.charCodeAt(next) !== COLON) return false;
  if (close === open + 1) return false;
  for (let i = open + 1; i < close; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) return true;
    if (!isDigit(c)) return false;
  }
  return true;
}

/** The end of the number starting at `start`, or -1 when JS would not keep it as Python does. */
function exactNumberEnd(text: string, start: number): number {
  let digits = 0;
  let i = start;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) digits++;
    else if (c === 0x2e || c === 0x65 || c === 0x45) return -1; // . e E: a float
    else if (c !== MINUS && c !== 0x2b) break;
  }
  return digits > MAX_EXACT_DIGITS ? -1 : i;
}

/**
 * True when JSON.parse's value of `text` (which JSON.parse accepted) renders in a 422
 * exactly as Python's value would.
 */
export function jsonParseKeepsPythonValues(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (close === -1 || isMovableKey(text, i, close)) return false;
      i = close;
    } else if (c === MINUS || isDigit(c)) {
      const end = exactNumberEnd(text, i);
      if (end === -1) return false;
      i = end - 1;
    }
  }
  return true;
}
