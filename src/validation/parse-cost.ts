/*
 * A cheap look at what a body will cost to parse, for bodies too large to parse on the event
 * loop without a second thought. JSON.parse costs about 2–10 ns a byte for text and numbers
 * but 150–600 ns per container or key, so a body of nested brackets or tiny objects blocks the
 * loop ten to fifty times longer than its size suggests. Size, containers + keys, and depth
 * (JSON.stringify recurses) are bounded; the scan stops at the first bound passed.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

export interface ParseCostLimits {
  /** Containers plus object keys. */
  readonly maxStructures: number;
  readonly maxDepth: number;
}

/** Index of the quote closing the string opened at `open`, or -1. Skips the text natively. */
function closingQuote(raw: Buffer, open: number): number {
  let quote = raw.indexOf(QUOTE, open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (raw[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = raw.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

/** Whether the text is UTF-8 (possibly with a BOM): other encodings are not scanned. */
function looksUtf8(raw: Buffer): boolean {
  return raw.length < 2 || (raw[0] !== 0 && raw[1] !== 0 && raw[0]! < 0xfe);
}

/**
 * True when the JSON in `raw` stays within `limits` (brackets inside strings are not
 * counted; UTF-8 continuation bytes never look like ASCII). Malformed JSON is judged only on
 * what was read: its parse fails early anyway. Non-UTF-8 bodies are never cheap.
 */
export function isCheapToParse(raw: Buffer, limits: ParseCostLimits): boolean {
  if (!looksUtf8(raw)) return false;
  let depth = 0;
  let structures = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === QUOTE) {
      i = closingQuote(raw, i);
      if (i === -1) return true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      structures++;
      if (depth > limits.maxDepth || structures > limits.maxStructures) return false;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      structures++;
      if (structures > limits.maxStructures) return false;
    }
  }
  return true;
}
