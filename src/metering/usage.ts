/** Token counts as the upstream reports them in `usage`. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Reads an OpenAI `usage` object. Returns null for `null`, a missing value or counts that are
 * not non-negative integers (so `"usage": null` on ordinary stream chunks is never usage).
 * `total_tokens` is derived when the upstream leaves it out.
 */
export function readUsage(value: unknown): Usage | null {
  if (typeof value !== 'object' || value === null) return null;
  const { prompt_tokens, completion_tokens, total_tokens } = value as Record<string, unknown>;
  if (!isCount(prompt_tokens) || !isCount(completion_tokens)) return null;
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: isCount(total_tokens) ? total_tokens : prompt_tokens + completion_tokens,
  };
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
