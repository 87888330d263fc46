/**
 * Tokens to reserve for a chat request before it is forwarded (SPEC 6.3): prompt characters / 4
 * plus the requested completion budget, else the configured default. Settled to real usage later.
 */
export function estimateChatTokens(body: Record<string, unknown>, defaultCompletionTokens: number): number {
  return tokensForPrompt(promptCharacters(body), body, defaultCompletionTokens);
}

/** The estimate of estimateChatTokens once the prompt's characters are counted. */
export function tokensForPrompt(promptChars: number, body: Record<string, unknown>, defaultCompletionTokens: number): number {
  const completion = completionBudget(body) ?? defaultCompletionTokens;
  return Math.ceil(promptChars / 4) + completion;
}

/** Characters of the prompt: every message's content (strings, or the text parts of content arrays). */
export function promptCharacters(body: Record<string, unknown>): number {
  let promptChars = 0;
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const message of messages) promptChars += contentLength((message as Record<string, unknown>).content);
  }
  return promptChars;
}

function completionBudget(body: Record<string, unknown>): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.floor(value);
  }
  return undefined;
}

/** Characters of a message's content: a string, or the text parts of a multi-part content array. */
function contentLength(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      total += (part as { text: string }).text.length;
    }
  }
  return total;
}
