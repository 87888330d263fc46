import type { ResponseTap, TapResult } from '../../../src/metering/index.js';

/** Realistic chat-completion bodies from the training service (UPSTREAM.md), for metering tests. */

export const MODEL = 'wandb-artifact:///acme/rl-agents/qwen3-agent:step3';
export const USAGE = { prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 };

const chunk = (choices: unknown[], usage: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: 'chatcmpl-9b1f0c2e4d6a4c8e',
  object: 'chat.completion.chunk',
  created: 1718035200,
  model: MODEL,
  choices,
  ...extra,
  usage,
});

const delta = (content: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
  index: 0,
  delta: content,
  logprobs: null,
  finish_reason: finish,
  ...(finish === null ? {} : { stop_reason: null }),
});

/** The `data:` payloads of a stream the client asked usage for: `"usage": null` on every chunk but the last. */
export const STREAM_CHUNKS: ReadonlyArray<Record<string, unknown>> = [
  chunk([delta({ role: 'assistant', content: '' })], null),
  chunk([delta({ content: 'Hello' })], null),
  chunk([delta({ content: ' there!' }, 'stop')], null),
];
export const USAGE_CHUNK: Record<string, unknown> = chunk([], USAGE);

export const event = (data: unknown, eol = '\n'): string => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`;

/** The SSE text the upstream sends: content chunks, the usage-only chunk, `[DONE]`. */
export function upstreamStream(eol = '\n'): { full: string; usageEvent: string; withoutUsage: string } {
  const content = STREAM_CHUNKS.map((c) => event(c, eol)).join('');
  const usageEvent = event(USAGE_CHUNK, eol);
  const done = event('[DONE]', eol);
  return { full: content + usageEvent + done, usageEvent, withoutUsage: content + done };
}

/** A non-stream reply, as the service answers `POST /v1/chat/completions`. */
export const CHAT_COMPLETION = {
  id: 'chatcmpl-5e0d7a1b9c3f4e21',
  object: 'chat.completion',
  created: 1718035200,
  model: MODEL,
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello there!', tool_calls: [] },
      logprobs: null,
      finish_reason: 'stop',
      stop_reason: null,
    },
  ],
  usage: USAGE,
  prompt_logprobs: null,
};

/** Feeds chunks through a tap as the proxy does: what the client got (the tail after the writes) and what the tap reported. */
export function relayThrough(tap: ResponseTap, chunks: readonly Buffer[]): { client: string; result: TapResult } {
  const sent = chunks.map((c) => tap.write(c));
  const result = tap.end();
  if (result.tail) sent.push(result.tail);
  return { client: Buffer.concat(sent).toString('utf8'), result };
}
