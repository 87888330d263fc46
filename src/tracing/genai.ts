import type { Attributes } from '@opentelemetry/api';
import type { ResponseTap, TapResult } from '../metering/index.js';
import type { ChatSampling } from '../validation/index.js';
import { scanJsonReply } from './reply-scan.js';

/**
 * The GenAI semantic conventions' view of a chat completion: what the request asked for (read
 * from the body the gateway already holds) and what the reply said (read from a bounded copy of
 * the bytes relayed). Only built for a span that is recording.
 */

/** Past this, the reply is not copied further: its id and finish reasons come early and late, and spans stay small. */
const MAX_WATCHED_BYTES = 1024 ** 2;

interface ChatMessage {
  readonly role?: unknown;
  readonly content?: unknown;
}

const asText = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

/** `gen_ai.input.messages`: the body parsed again, only when content is captured (undefined for a body it cannot read). */
function inputMessages(raw: Buffer | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let body: { readonly messages?: unknown };
  try {
    body = JSON.parse(raw.toString('utf8')) as { readonly messages?: unknown };
  } catch {
    return undefined;
  }
  if (!Array.isArray(body.messages)) return undefined;
  return JSON.stringify((body.messages as ChatMessage[]).map((m) => ({ role: m.role, parts: [{ type: 'text', content: asText(m.content) }] })));
}

/**
 * `gen_ai.request.*` from the sampling settings validation read (the body is not parsed again
 * for them); `gen_ai.input.messages` from the body only when content is captured. Written into
 * `attributes`, so that the span gets them all at its start.
 */
export function requestAttributes(sampling: ChatSampling, raw: Buffer | undefined, captureContent: boolean, attributes: Attributes = {}): Attributes {
  if (sampling.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = sampling.maxTokens;
  if (sampling.temperature !== undefined) attributes['gen_ai.request.temperature'] = sampling.temperature;
  if (sampling.topP !== undefined) attributes['gen_ai.request.top_p'] = sampling.topP;
  if (sampling.stream !== undefined) attributes['gen_ai.request.stream'] = sampling.stream;
  const messages = captureContent ? inputMessages(raw) : undefined;
  if (messages !== undefined) attributes['gen_ai.input.messages'] = messages;
  return attributes;
}

/** What the reply said, beyond the usage and model the metering tap reads. */
export interface ReplyFacts {
  readonly id?: string;
  readonly finishReasons: string[];
  readonly text: string;
}

interface ReplyChoice {
  readonly finish_reason?: unknown;
  readonly message?: { readonly content?: unknown };
  readonly delta?: { readonly content?: unknown };
}

interface ReplyObject {
  readonly id?: unknown;
  readonly choices?: unknown;
}

function collect(reply: ReplyObject, facts: { id?: string; finishReasons: string[]; text: string }): void {
  if (typeof reply.id === 'string') facts.id ??= reply.id;
  if (!Array.isArray(reply.choices)) return;
  for (const choice of reply.choices as ReplyChoice[]) {
    if (typeof choice.finish_reason === 'string') facts.finishReasons.push(choice.finish_reason);
    const content = choice.message?.content ?? choice.delta?.content;
    if (typeof content === 'string') facts.text += content;
  }
}

const parseObject = (text: string): ReplyObject | undefined => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as ReplyObject) : undefined;
  } catch {
    return undefined;
  }
};

/** Reads a JSON reply or an SSE stream of chunks (a truncated copy yields what it holds). */
export function readReply(bytes: Buffer): ReplyFacts {
  const facts: { id?: string; finishReasons: string[]; text: string } = { finishReasons: [], text: '' };
  const text = bytes.toString('utf8');
  const whole = parseObject(text);
  if (whole) {
    collect(whole, facts);
    return facts;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const chunk = parseObject(line.slice(5).trim());
    if (chunk) collect(chunk, facts);
  }
  return facts;
}

/** The metering tap, seen through: a bounded copy of the reply and when its first chunk came. */
export class ReplyWatch implements ResponseTap {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private stopped = false;
  /** When a streamed reply's first chunk came (undefined for a JSON reply: it has no first chunk to speak of). */
  firstChunkAt: number | undefined;
  seen: TapResult | undefined;

  constructor(
    private readonly inner: ResponseTap,
    private readonly streamed: boolean,
  ) {}

  get rewrites(): boolean {
    return this.inner.rewrites;
  }

  write(chunk: Buffer): Buffer {
    if (this.streamed) this.firstChunkAt ??= performance.now();
    if (this.size < MAX_WATCHED_BYTES && !this.stopped) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    return this.inner.write(chunk);
  }

  end(): TapResult {
    return (this.seen = this.inner.end());
  }

  /** The request ended: what is relayed after (a client that left) is not the reply its spans describe. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * What the reply said, read once the exchange is over (off the relay). Without the text
   * (content not captured), a JSON reply is scanned for its id and finish reasons, not parsed.
   */
  facts(withText: boolean): ReplyFacts {
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    return (withText || this.streamed ? undefined : scanJsonReply(bytes)) ?? readReply(bytes);
  }
}
