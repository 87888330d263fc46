/** Token counts as the upstream reports them in `usage`. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** More tokens than any one request can use: a count past it is a broken or hostile upstream, not usage. */
export const MAX_TOKENS_PER_REQUEST = 1_000_000_000;

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKENS_PER_REQUEST;

/** What a `usage` field said: counts to meter, nothing (absent or null), or counts that cannot be right. */
export type UsageReading = Usage | null | 'invalid';

/**
 * Reads an OpenAI `usage` object. Null for `null` or a missing value (so `"usage": null` on
 * ordinary stream chunks is never usage); 'invalid' for counts that are negative, not whole,
 * or over 10^9 — they are never summed. `total_tokens` is derived when left out.
 */
export function readUsage(value: unknown): UsageReading {
  if (typeof value !== 'object' || value === null) return null;
  const { prompt_tokens, completion_tokens, total_tokens } = value as Record<string, unknown>;
  if (prompt_tokens === undefined && completion_tokens === undefined) return null;
  if (!isCount(prompt_tokens) || !isCount(completion_tokens)) return 'invalid';
  if (total_tokens === undefined || total_tokens === null) return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
  if (!isCount(total_tokens)) return 'invalid';
  return { prompt_tokens, completion_tokens, total_tokens };
}

/** The response `model` when it is a string, else null. */
export function readModel(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const model = (value as Record<string, unknown>).model;
  return typeof model === 'string' ? model : null;
}

/** JSON.parse that answers undefined instead of throwing (upstream bytes are not trusted). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Where the value of the JSON key `name` starts in `body` (the first byte after the colon and
 * any whitespace), searching from the end (`fromEnd`) or the start; -1 when absent. A match
 * counts only as a key: an unescaped `"name"` followed by `:` cannot be inside a string
 * (quotes there are escaped), so text that quotes the key name is never taken for it.
 */
function valueStart(body: Buffer, name: string, fromEnd: boolean): number {
  const needle = `"${name}"`;
  let at = fromEnd ? body.lastIndexOf(needle) : body.indexOf(needle);
  while (at >= 0) {
    let next = at + needle.length;
    while (next < body.length && (body[next] === 0x20 || body[next] === 0x0a || body[next] === 0x0d || body[next] === 0x09)) next += 1;
    if (body[next] === 0x3a && (at === 0 || body[at - 1] !== BACKSLASH)) {
      next += 1;
      while (next < body.length && (body[next] === 0x20 || body[next] === 0x0a || body[next] === 0x0d || body[next] === 0x09)) next += 1;
      return next;
    }
    at = fromEnd ? body.lastIndexOf(needle, at - 1) : body.indexOf(needle, at + 1);
  }
  return -1;
}

/** The end (exclusive) of the JSON object or string starting at `start`, or -1 when it does not end in `body`. */
function valueEnd(body: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (byte === QUOTE) inString = true;
    else if (byte === 0x7b) depth += 1;
    else if (byte === 0x7d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * A JSON reply's `usage` object and `model` string, read without parsing the whole reply:
 * `usage` is near its end (searched from there) and `model` near its start, so only those two
 * small values are parsed. Undefined when a value is missing or is not what it should be.
 */
export function scanReply(body: Buffer): { usage: unknown; model: string | null } {
  let usage: unknown;
  const usageAt = valueStart(body, 'usage', true);
  if (usageAt >= 0 && body[usageAt] === 0x7b) {
    const end = valueEnd(body, usageAt);
    if (end > 0) usage = parseJsonOrUndefined(body.toString('utf8', usageAt, end));
  }
  let model: string | null = null;
  const modelAt = valueStart(body, 'model', false);
  if (modelAt >= 0 && body[modelAt] === QUOTE) {
    const end = valueEnd(body, modelAt);
    const value = end > 0 ? parseJsonOrUndefined(body.toString('utf8', modelAt, end)) : undefined;
    if (typeof value === 'string') model = value;
  }
  return { usage, model };
}
