import type { Attributes } from '@opentelemetry/api';
import type { ResponseTap, TapResult } from '../metering/index.js';

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

interface ChatRequestBody {
  readonly model?: unknown;
  readonly max_tokens?: unknown;
  readonly max_completion_tokens?: unknown;
  readonly temperature?: unknown;
  readonly top_p?: unknown;
  readonly stream?: unknown;
  readonly messages?: unknown;
}

const asText = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

/** `gen_ai.request.*` from the chat body; `gen_ai.input.messages` only when content is captured. */
export function requestAttributes(raw: Buffer | undefined, captureContent: boolean): Attributes {
  if (raw === undefined) return {};
  let body: ChatRequestBody;
  try {
    body = JSON.parse(raw.toString('utf8')) as ChatRequestBody;
  } catch {
    return {};
  }
  const attributes: Attributes = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') attributes['gen_ai.request.max_tokens'] = maxTokens;
  if (typeof body.temperature === 'number') attributes['gen_ai.request.temperature'] = body.temperature;
  if (typeof body.top_p === 'number') attributes['gen_ai.request.top_p'] = body.top_p;
  if (typeof body.stream === 'boolean') attributes['gen_ai.request.stream'] = body.stream;
  if (captureContent && Array.isArray(body.messages)) {
    const messages = (body.messages as ChatMessage[]).map((m) => ({ role: m.role, parts: [{ type: 'text', content: asText(m.content) }] }));
    attributes['gen_ai.input.messages'] = JSON.stringify(messages);
  }
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
    if (this.size < MAX_WATCHED_BYTES) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    return this.inner.write(chunk);
  }

  end(): TapResult {
    return (this.seen = this.inner.end());
  }

  /** What the reply said (parsed once the exchange is over, off the relay). */
  facts(): ReplyFacts {
    return readReply(Buffer.concat(this.chunks, this.size));
  }
}
