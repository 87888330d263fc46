import { forceStreamUsage, type ForcedBody } from '../metering/force-stream-usage.js';
import type { ChatBody } from './chat-validation.js';
import { stringifyWithoutRecursion } from './stack-safe-stringify.js';
import { promptCharacters, tokensForPrompt } from './token-estimate.js';

/** What the pipeline needs to know of a valid chat body, so that the parsed body never leaves the check. */
export interface ChatFacts {
  readonly model: string;
  /** Tokens to reserve before forwarding (SPEC 6.3): estimateChatTokens of the body. */
  readonly estimatedTokens: number;
  /** Prompt characters counted (for later estimates of aborted streams). */
  readonly promptChars: number;
  readonly stream: boolean;
  /** The bytes to forward: the original bytes, or with include_usage added as forceStreamUsage() adds it. */
  readonly forwardBytes: Buffer;
  /** True when include_usage was added by the gateway (the usage-only SSE event is then cut from the client's stream). */
  readonly usageForced: boolean;
  /** What a trace's `gen_ai.request.*` says, read here so that a traced request's body is not parsed twice. */
  readonly sampling: ChatSampling;
}

/** The body's sampling settings, each only when the body gave one of the right type. */
export interface ChatSampling {
  /** max_completion_tokens, else max_tokens. */
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly stream?: boolean;
}

const numberOrUndefined = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** A few property reads, so it is worked out for every chat body rather than kept for tracing alone. */
function samplingOf(body: ChatBody): ChatSampling {
  const { max_completion_tokens: maxCompletionTokens, max_tokens: maxTokens, temperature, top_p: topP, stream } = body;
  return {
    maxTokens: numberOrUndefined(maxCompletionTokens ?? maxTokens),
    temperature: numberOrUndefined(temperature),
    topP: numberOrUndefined(topP),
    stream: typeof stream === 'boolean' ? stream : undefined,
  };
}

/** How facts are worked out: fixed when the checker is built. */
export interface ChatFactSettings {
  readonly defaultCompletionTokens: number;
  readonly forceStreamUsage: boolean;
}

/**
 * forceStreamUsage(), which re-serialises with JSON.stringify when the body already has
 * stream_options; a body nested too deep for JSON.stringify's recursion gets the same text
 * from a serialiser without recursion rather than failing the request.
 */
function forcedBody(raw: Buffer, body: ChatBody): ForcedBody {
  try {
    return forceStreamUsage(raw, body);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return forceStreamUsage(raw, body, stringifyWithoutRecursion);
  }
}

/** The facts of a chat body that passed validation; `raw` is the body as received. */
export function chatFactsOf(raw: Buffer, body: ChatBody, settings: ChatFactSettings): ChatFacts {
  const promptChars = promptCharacters(body);
  const { bytes, forced } = settings.forceStreamUsage ? forcedBody(raw, body) : { bytes: raw, forced: false };
  return {
    model: body.model,
    estimatedTokens: tokensForPrompt(promptChars, body, settings.defaultCompletionTokens),
    promptChars,
    stream: body.stream === true,
    forwardBytes: bytes,
    usageForced: forced,
    sampling: samplingOf(body),
  };
}
