import { jsonKey, lastKeyValue, nextKeyValue, valueEnd } from './json-scan.js';

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
const OPEN_BRACE = 0x7b;
const USAGE_KEY = jsonKey('usage');
const MODEL_KEY = jsonKey('model');

/**
 * A JSON reply's `usage` object and `model` string, read without parsing the whole reply:
 * `usage` is near its end (searched from there) and `model` near its start, so only those two
 * small values are parsed. Undefined when a value is missing or is not what it should be.
 */
export function scanReply(body: Buffer): { usage: unknown; model: string | null } {
  let usage: unknown;
  const usageAt = lastKeyValue(body, USAGE_KEY);
  if (usageAt >= 0 && body[usageAt] === OPEN_BRACE) {
    const end = valueEnd(body, usageAt);
    if (end > 0) usage = parseJsonOrUndefined(body.toString('utf8', usageAt, end));
  }
  let model: string | null = null;
  const modelAt = nextKeyValue(body, MODEL_KEY);
  if (modelAt >= 0 && body[modelAt] === QUOTE) {
    const end = valueEnd(body, modelAt);
    const value = end > 0 ? parseJsonOrUndefined(body.toString('utf8', modelAt, end)) : undefined;
    if (typeof value === 'string') model = value;
  }
  return { usage, model };
}
