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

/**
 * Parts of a chat body besides `messages` that the model reads as text (OpenAI chat API): tool
 * and function definitions, the choice among them, a structured output schema, predicted
 * output. Sampling settings, `stop`, `metadata`, `user` and the like are not prompt.
 */
const PROMPT_PARTS = ['tools', 'functions', 'tool_choice', 'function_call', 'response_format', 'prediction'] as const;

/** Parts of a message besides its content that the model reads: the calls an assistant made. */
const MESSAGE_PROMPT_PARTS = ['tool_calls', 'function_call'] as const;

/**
 * Characters of the prompt (SPEC 14.3: every part the model reads, not `messages` alone): each
 * message's content text (strings, or the text parts of content arrays) and its tool or
 * function calls, plus the body's PROMPT_PARTS. Parts other than content text count as their
 * JSON text: a tool's schema is read with its structure, and a client cannot pad it unseen.
 */
export function promptCharacters(body: Record<string, unknown>): number {
  let promptChars = 0;
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const message of messages as Record<string, unknown>[]) {
      promptChars += contentLength(message.content);
      for (const part of MESSAGE_PROMPT_PARTS) if (message[part] !== undefined) promptChars += jsonTextLength(message[part]);
    }
  }
  for (const part of PROMPT_PARTS) if (body[part] !== undefined) promptChars += jsonTextLength(body[part]);
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

/**
 * JSON.stringify(value).length for what JSON.parse returns, without building the text and
 * without recursion (a body may nest deeper than the call stack; JSON.stringify would throw).
 */
export function jsonTextLength(root: unknown): number {
  let total = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') total += JSON.stringify(value).length;
    else if (typeof value === 'number') total += Number.isFinite(value) ? String(value).length : 4; // NaN, ±Infinity: null
    else if (typeof value === 'boolean') total += value ? 4 : 5;
    else if (value === null || typeof value !== 'object') total += 4;
    else if (Array.isArray(value)) {
      // Brackets and commas, then the items.
      total += 1 + Math.max(1, value.length);
      for (const item of value) pending.push(item);
    } else {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      total += 1 + Math.max(1, keys.length);
      for (const key of keys) {
        total += JSON.stringify(key).length + 1; // the key and its colon
        pending.push(record[key]);
      }
    }
  }
  return total;
}
