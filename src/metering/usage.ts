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
