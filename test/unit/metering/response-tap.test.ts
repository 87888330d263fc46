import { describe, expect, it } from 'vitest';
import { createResponseTap, type ResponseTap, type Usage } from '../../../src/metering/index.js';
import { CHAT_COMPLETION, MODEL, STREAM_CHUNKS, USAGE, USAGE_CHUNK, event, relayThrough, upstreamStream } from './chat-fixtures.js';

const SSE = 'text/event-stream; charset=utf-8';

/** Feeds chunks through a tap like the proxy does; returns what the client got and what was metered. */
function relay(tap: ResponseTap, chunks: Buffer[]): { client: string; usage: Usage | null; model: string | null } {
  const { client, result } = relayThrough(tap, chunks);
  return { client, usage: result.usage, model: result.model };
}

const splitAt = (text: string, ...offsets: number[]): Buffer[] => {
  const bytes = Buffer.from(text);
  const cuts = [0, ...offsets, bytes.length];
  return cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
};

const byteByByte = (text: string): Buffer[] => [...Buffer.from(text)].map((b) => Buffer.from([b]));

describe('response tap: JSON replies', () => {
  it('relays every chunk as the same Buffer and reads usage and model at the end', () => {
    const tap = createResponseTap('application/json', { dropUsageChunk: false });
    const chunks = splitAt(JSON.stringify(CHAT_COMPLETION), 10, 200);
    for (const c of chunks) expect(tap.write(c)).toBe(c);
    expect(tap.end()).toEqual({ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 0, completionBytes: 0 });
  });

  it('accepts application/json with parameters', () => {
    const tap = createResponseTap('Application/JSON; charset=utf-8', { dropUsageChunk: true });
    expect(relay(tap, splitAt(JSON.stringify(CHAT_COMPLETION), 1)).usage).toEqual(USAGE);
  });

  it('meters a reply of exactly maxJsonBytes', () => {
    const text = JSON.stringify(CHAT_COMPLETION);
    const tap = createResponseTap('application/json', { dropUsageChunk: false, maxJsonBytes: Buffer.byteLength(text) });
    expect(relay(tap, splitAt(text, 60, 120)).usage).toEqual(USAGE);
  });

  it('gives up on usage above maxJsonBytes but still relays every byte', () => {
    const text = JSON.stringify(CHAT_COMPLETION);
    const tap = createResponseTap('application/json', { dropUsageChunk: false, maxJsonBytes: 100 });
    expect(relay(tap, splitAt(text, 60, 120))).toEqual({ client: text, usage: null, model: null });
  });

  it('meters nothing for a reply that is not JSON, and does not throw', () => {
    const tap = createResponseTap('application/json', { dropUsageChunk: false });
    expect(relay(tap, [Buffer.from('{"id":"chatcmpl-1","usage":{"prompt_')])).toEqual({
      client: '{"id":"chatcmpl-1","usage":{"prompt_',
      usage: null,
      model: null,
    });
  });

  it('reads usage and model as keys only: text or tool arguments quoting them are not taken for them', () => {
    const reply = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      model: 'qwen3 "14b"',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Set "usage": {"prompt_tokens": 999999, "completion_tokens": 1} and "model": "fake" in the config.',
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'report', arguments: '{"usage":{"prompt_tokens":5,"completion_tokens":5}}' } }],
          },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 3 } },
    };
    const text = JSON.stringify(reply, null, 1);
    const tap = createResponseTap('application/json', { dropUsageChunk: false });
    expect(relay(tap, splitAt(text, 7, 300))).toEqual({ client: text, usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 }, model: 'qwen3 "14b"' });
  });

  it('meters nothing for a JSON array or a reply whose usage is not an object', () => {
    const tap = () => createResponseTap('application/json', { dropUsageChunk: false });
    expect(relay(tap(), [Buffer.from('[{"usage":{"prompt_tokens":1,"completion_tokens":1}}]')]).usage).toBeNull();
    expect(relay(tap(), [Buffer.from('{"id":"x","usage":"lots"}')]).usage).toBeNull();
    expect(relay(tap(), [Buffer.from('{"id":"x","usage":null}')]).usage).toBeNull();
  });

  it('derives total_tokens when the upstream leaves it out', () => {
    const tap = createResponseTap('application/json', { dropUsageChunk: false });
    const reply = { ...CHAT_COMPLETION, usage: { prompt_tokens: 7, completion_tokens: 5 } };
    expect(relay(tap, [Buffer.from(JSON.stringify(reply))]).usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
  });

  it.each([
    ['application/vnd.openai+json', true],
    [' application/json ; charset=utf-8', true],
    ['application/problem+json; charset=utf-8', true],
    ['text/plain+json', false],
    ['application/jsonx', false],
    ['application/json-seq', false],
  ])('meters a reply of Content-Type %j: %s', (contentType, metered) => {
    const tap = createResponseTap(contentType, { dropUsageChunk: false });
    expect(relay(tap, [Buffer.from(JSON.stringify(CHAT_COMPLETION))]).usage).toEqual(metered ? USAGE : null);
  });

  it.each([
    ['identity', true],
    [' Identity ', true],
    ['', true],
    ['gzip', false],
    ['br', false],
    ['IDENTITY, gzip', false],
  ])('meters a JSON reply of Content-Encoding %j: %s', (contentEncoding, metered) => {
    const tap = createResponseTap('application/json', { dropUsageChunk: false, contentEncoding });
    expect(tap.rewrites).toBe(false);
    expect(relay(tap, [Buffer.from(JSON.stringify(CHAT_COMPLETION))]).usage).toEqual(metered ? USAGE : null);
  });

  it('passes other content types and compressed bodies through unmetered', () => {
    const body = Buffer.from(JSON.stringify(CHAT_COMPLETION));
    for (const tap of [
      createResponseTap('text/plain', { dropUsageChunk: true }),
      createResponseTap(undefined, { dropUsageChunk: true }),
      createResponseTap('application/json', { dropUsageChunk: false, contentEncoding: 'gzip' }),
    ]) {
      expect(tap.rewrites).toBe(false);
      expect(tap.write(body)).toBe(body);
      expect(tap.end()).toEqual({ tail: null, usage: null, invalidUsage: false, model: null, contentChunks: 0, completionBytes: 0 });
    }
  });
});

describe('response tap: SSE streams the client asked usage for', () => {
  it('returns every chunk untouched (same Buffer) and meters the usage-only chunk', () => {
    const { full } = upstreamStream();
    const chunks = splitAt(full, 17, 400, 401, 900);
    const tap = createResponseTap(SSE, { dropUsageChunk: false });
    for (const c of chunks) expect(tap.write(c)).toBe(c);
    // "Hello" and " there!": two chunks of text, 12 bytes (the role chunk's empty content is none).
    expect(tap.end()).toEqual({ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 2, completionBytes: 12 });
  });

  it('relays bytes out === bytes in when fed byte by byte', () => {
    const { full } = upstreamStream();
    expect(relay(createResponseTap(SSE, { dropUsageChunk: false }), byteByByte(full))).toEqual({ client: full, usage: USAGE, model: MODEL });
  });

  it('does not take "usage": null chunks for usage', () => {
    const text = STREAM_CHUNKS.map((c) => event(c)).join('') + event('[DONE]');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: false }), [Buffer.from(text)])).toEqual({ client: text, usage: null, model: MODEL });
  });

  it('keeps the last usage when every chunk carries cumulative usage (continuous_usage_stats)', () => {
    const text =
      event({ ...STREAM_CHUNKS[1], usage: { prompt_tokens: 25, completion_tokens: 1, total_tokens: 26 } }) +
      event({ ...STREAM_CHUNKS[2], usage: { prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 } }) +
      event('[DONE]');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: false }), [Buffer.from(text)])).toEqual({ client: text, usage: USAGE, model: MODEL });
  });
});

describe('response tap: SSE streams where the gateway forced usage', () => {
  it('removes exactly the usage-only event and relays every other byte', () => {
    const { full, withoutUsage } = upstreamStream();
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [Buffer.from(full)])).toEqual({ client: withoutUsage, usage: USAGE, model: MODEL });
  });

  it('returns the same Buffer for a chunk of whole events without usage', () => {
    const tap = createResponseTap(SSE, { dropUsageChunk: true });
    const first = Buffer.from(event(STREAM_CHUNKS[0]) + event(STREAM_CHUNKS[1]));
    expect(tap.write(first)).toBe(first);
    expect(tap.write(Buffer.from(event(USAGE_CHUNK))).length).toBe(0);
    const done = Buffer.from(event('[DONE]'));
    expect(tap.write(done)).toBe(done);
    expect(tap.end()).toEqual({ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 1, completionBytes: 5 });
  });

  it('releases each complete event at once and holds back only the incomplete one', () => {
    const first = event(STREAM_CHUNKS[0]);
    const tap = createResponseTap(SSE, { dropUsageChunk: true });
    expect(tap.write(Buffer.from(first + 'data: {"id":')).toString()).toBe(first);
    expect(tap.write(Buffer.from('"x"}\n')).toString()).toBe('');
    expect(tap.write(Buffer.from('\ndata: [DO')).toString()).toBe('data: {"id":"x"}\n\n');
    expect(tap.end().tail?.toString()).toBe('data: [DO');
  });

  it('cuts the usage event out wherever the stream is split in two', () => {
    const { full, withoutUsage } = upstreamStream();
    for (let at = 1; at < Buffer.byteLength(full); at++) {
      const got = relay(createResponseTap(SSE, { dropUsageChunk: true }), splitAt(full, at));
      expect(got, `split at byte ${at}`).toEqual({ client: withoutUsage, usage: USAGE, model: MODEL });
    }
  });

  it('cuts the usage event out when every byte arrives in its own write', () => {
    const { full, withoutUsage } = upstreamStream();
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), byteByByte(full))).toEqual({ client: withoutUsage, usage: USAGE, model: MODEL });
  });

  it('cuts CRLF-terminated events out exactly, wherever the stream is split', () => {
    const { full, withoutUsage } = upstreamStream('\r\n');
    for (let at = 1; at < Buffer.byteLength(full); at++) {
      const got = relay(createResponseTap(SSE, { dropUsageChunk: true }), splitAt(full, at));
      expect(got, `split at byte ${at}`).toEqual({ client: withoutUsage, usage: USAGE, model: MODEL });
    }
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), byteByByte(full)).client).toBe(withoutUsage);
  });

  it('cuts events terminated by a lone CR (SSE grammar) out exactly', () => {
    const { full, withoutUsage } = upstreamStream('\r');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), byteByByte(full))).toEqual({ client: withoutUsage, usage: USAGE, model: MODEL });
  });

  it('meters a usage event split into multi-line data, and drops it whole', () => {
    const json = JSON.stringify(USAGE_CHUNK);
    const at = json.indexOf('"choices"');
    const multiLine = `data: ${json.slice(0, at)}\ndata:${json.slice(at)}\n\n`;
    const text = event(STREAM_CHUNKS[2]) + multiLine + event('[DONE]');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [Buffer.from(text)])).toEqual({
      client: event(STREAM_CHUNKS[2]) + event('[DONE]'),
      usage: USAGE,
      model: MODEL,
    });
  });

  it('keeps a usage event that also carries choices (only usage-only events are removed)', () => {
    const text = event({ ...STREAM_CHUNKS[2], usage: USAGE }) + event('[DONE]');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [Buffer.from(text)])).toEqual({ client: text, usage: USAGE, model: MODEL });
  });

  it('relays an event larger than maxEventBytes as it comes instead of holding it', () => {
    const tap = createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes: 64 });
    const big = Buffer.from(`data: {"id":"${'x'.repeat(100)}`);
    expect(tap.write(big)).toBe(big);
    const rest = Buffer.from('"}\n\n');
    expect(tap.write(rest)).toBe(rest);
    expect(relay(tap, [Buffer.from(event(USAGE_CHUNK) + event('[DONE]'))]).client).toBe(event('[DONE]'));
  });
});

describe('response tap: broken streams', () => {
  it('meters a stream that ends after the usage event without [DONE]', () => {
    const { usageEvent } = upstreamStream();
    const content = STREAM_CHUNKS.map((c) => event(c)).join('');
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), splitAt(content + usageEvent, 100))).toEqual({
      client: content,
      usage: USAGE,
      model: MODEL,
    });
  });

  it('meters what was seen when the stream stops mid-stream', () => {
    const content = event(STREAM_CHUNKS[0]) + event(STREAM_CHUNKS[1]);
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [Buffer.from(content)])).toEqual({ client: content, usage: null, model: MODEL });
  });

  it('relays a usage event cut off mid-JSON unchanged, as the tail', () => {
    const { usageEvent } = upstreamStream();
    const text = event(STREAM_CHUNKS[2]) + usageEvent.slice(0, 50);
    const tap = createResponseTap(SSE, { dropUsageChunk: true });
    const got = relay(tap, splitAt(text, 30));
    expect(got).toEqual({ client: text, usage: null, model: MODEL });
  });

  it('meters and drops a complete usage event whose final blank line never came', () => {
    const text = event(STREAM_CHUNKS[2]) + `data: ${JSON.stringify(USAGE_CHUNK)}\n`;
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [Buffer.from(text)])).toEqual({
      client: event(STREAM_CHUNKS[2]),
      usage: USAGE,
      model: MODEL,
    });
  });

  it('relays malformed lines, comments and non-JSON data unchanged, meters nothing, and does not throw', () => {
    const text = [
      ': keep-alive\n\n',
      'event: ping\n\n',
      'this is not a field line\n\n',
      'data: not json at all\n\n',
      'data: {"usage": {"prompt_tokens": "many"}, "choices": []}\n\n',
      'data: {"truncated": \n\n',
      'data: ["usage", {"usage": 3}]\n\n',
      'data:\n\n',
      '\n\n\n',
      'data: [DONE]\n\n',
    ].join('');
    for (const dropUsageChunk of [true, false]) {
      const tap = createResponseTap(SSE, { dropUsageChunk });
      expect(relay(tap, byteByByte(text))).toEqual({ client: text, usage: null, model: null });
    }
  });

  it('handles an empty stream', () => {
    const tap = createResponseTap(SSE, { dropUsageChunk: true });
    expect(tap.write(Buffer.alloc(0)).length).toBe(0);
    expect(tap.end()).toEqual({ tail: null, usage: null, invalidUsage: false, model: null, contentChunks: 0, completionBytes: 0 });
  });

  it('counts the text of a stream cut before its usage chunk: what it is charged by', () => {
    const tap = createResponseTap(SSE, { dropUsageChunk: true });
    const quoted = 'say "hi" é';
    const text = event(STREAM_CHUNKS[0]) + event(STREAM_CHUNKS[1]) + event({ ...STREAM_CHUNKS[1], choices: [{ index: 0, delta: { content: quoted } }] });
    tap.write(Buffer.from(text));
    const seen = tap.end();
    expect(seen.usage).toBeNull();
    // Raw JSON bytes of the text, escapes included: an estimate that never parses a chunk.
    expect([seen.contentChunks, seen.completionBytes]).toEqual([2, 5 + Buffer.byteLength(JSON.stringify(quoted)) - 2]);
  });
});

describe('response tap: usage that cannot be right', () => {
  it.each([
    ['2^53 - 1 prompt tokens', { prompt_tokens: 9007199254740991, completion_tokens: 3, total_tokens: 9007199254740994 }],
    ['more than 10^9 tokens', { prompt_tokens: 1_000_000_001, completion_tokens: 3 }],
    ['negative tokens', { prompt_tokens: -5, completion_tokens: 3, total_tokens: -2 }],
    ['fractional tokens', { prompt_tokens: 2.5, completion_tokens: 3, total_tokens: 5.5 }],
    ['a string count', { prompt_tokens: '25', completion_tokens: 3, total_tokens: 28 }],
    ['a total over 10^9', { prompt_tokens: 25, completion_tokens: 3, total_tokens: 2_000_000_000 }],
  ])('is ignored, never summed, and flagged: %s', (_name, usage) => {
    const json = createResponseTap('application/json', { dropUsageChunk: false });
    json.write(Buffer.from(JSON.stringify({ ...CHAT_COMPLETION, usage })));
    expect(json.end()).toMatchObject({ usage: null, invalidUsage: true });
    const sse = createResponseTap(SSE, { dropUsageChunk: false });
    sse.write(Buffer.from(event({ ...USAGE_CHUNK, usage }) + event('[DONE]')));
    expect(sse.end()).toMatchObject({ usage: null, invalidUsage: true });
  });

  it('accepts exactly 10^9 tokens', () => {
    const tap = createResponseTap('application/json', { dropUsageChunk: false });
    tap.write(Buffer.from(JSON.stringify({ ...CHAT_COMPLETION, usage: { prompt_tokens: 1_000_000_000, completion_tokens: 0, total_tokens: 1_000_000_000 } })));
    expect(tap.end()).toMatchObject({ usage: { prompt_tokens: 1_000_000_000, completion_tokens: 0, total_tokens: 1_000_000_000 }, invalidUsage: false });
  });
});
