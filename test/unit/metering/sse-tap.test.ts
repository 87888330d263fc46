import { describe, expect, it } from 'vitest';
import { createResponseTap, type ResponseTap } from '../../../src/metering/index.js';
import { MODEL, STREAM_CHUNKS, USAGE, USAGE_CHUNK, event, relayThrough } from './chat-fixtures.js';

/**
 * The SSE tap's finer rules, each as a client or the ledger would see it: which event names the
 * model, which usage counts, which event is cut out, and what an event too big to inspect does
 * to the ones after it.
 */

const SSE = 'text/event-stream';

const relay = (tap: ResponseTap, chunks: readonly string[]): ReturnType<typeof relayThrough> => relayThrough(tap, chunks.map((c) => Buffer.from(c)));

const DONE = event('[DONE]');
const withoutModel = (chunk: Record<string, unknown>): Record<string, unknown> => {
  const { model: _model, ...rest } = chunk;
  return rest;
};

describe('SSE tap: the model of a stream', () => {
  it('is the first event’s, even when later events name another', () => {
    const text = event(STREAM_CHUNKS[0]) + event({ ...STREAM_CHUNKS[1], model: 'other' }) + event({ ...USAGE_CHUNK, model: 'other-too' }) + DONE;
    const { result } = relay(createResponseTap(SSE, { dropUsageChunk: false }), [text]);
    expect(result.model).toBe(MODEL);
    expect(result.usage).toEqual(USAGE);
  });

  it('stays the first event’s when the events after it name none', () => {
    const text = event(STREAM_CHUNKS[0]) + event(withoutModel(STREAM_CHUNKS[1]!)) + event(withoutModel(USAGE_CHUNK)) + DONE;
    expect(relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]).result.model).toBe(MODEL);
  });

  it('is the usage event’s when the first event names none (events between are not read for it)', () => {
    const text = event(withoutModel(STREAM_CHUNKS[0]!)) + event({ ...STREAM_CHUNKS[1], model: 'in-between' }) + event(USAGE_CHUNK) + DONE;
    const { result } = relay(createResponseTap(SSE, { dropUsageChunk: false }), [text]);
    expect(result.model).toBe(MODEL);
    expect(result.usage).toEqual(USAGE);
  });

  it('is read past a first event whose data is JSON null, a number or an array, without throwing', () => {
    for (const first of ['null', '7', '[{"model":"not-this"}]']) {
      const text = event(first) + event(USAGE_CHUNK) + DONE;
      const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
      expect({ first, client, usage: result.usage, model: result.model }).toEqual({ first, client: event(first) + DONE, usage: USAGE, model: MODEL });
    }
  });
});

describe('SSE tap: which usage counts, and which event is cut', () => {
  it('reads no usage, and does not throw, from an event that names usage but whose data is JSON null or not JSON', () => {
    // The pre-check reads the event's raw bytes, comments included; the data itself is what counts.
    const odd = [
      ': "usage": {"prompt_tokens": 1, "completion_tokens": 1}\ndata: null\n\n',
      'data: {"usage": {"prompt_tokens": 1, "completion_tokens": 1}, oops}\n\n',
    ];
    for (const oddEvent of odd) {
      const text = event(STREAM_CHUNKS[1]) + oddEvent + DONE;
      const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
      expect({ client, usage: result.usage, invalidUsage: result.invalidUsage }).toEqual({ client: text, usage: null, invalidUsage: false });
    }
  });

  it('keeps the usage already read when a later event says "usage": null', () => {
    const text = event(USAGE_CHUNK) + event({ ...STREAM_CHUNKS[2], usage: null }) + DONE;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
    expect(result.usage).toEqual(USAGE);
    expect(client).toBe(event({ ...STREAM_CHUNKS[2], usage: null }) + DONE);
  });

  it('keeps the usage already read when a later event carries a usage object with no counts, and relays that event', () => {
    const empty = event({ ...USAGE_CHUNK, usage: {} });
    const text = event(USAGE_CHUNK) + empty + DONE;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
    expect({ client, usage: result.usage }).toEqual({ client: empty + DONE, usage: USAGE });
  });

  it('relays a usage-only event whose counts cannot be right, and flags them instead of metering them', () => {
    const invalid = event({ ...USAGE_CHUNK, usage: { prompt_tokens: -1, completion_tokens: 3 } });
    const text = event(STREAM_CHUNKS[1]) + invalid + DONE;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
    expect({ client, usage: result.usage, invalidUsage: result.invalidUsage }).toEqual({ client: text, usage: null, invalidUsage: true });
  });

  it('cuts a usage event that has no "choices" key at all, as it cuts one with "choices": []', () => {
    const { choices: _choices, ...bare } = USAGE_CHUNK;
    const text = event(STREAM_CHUNKS[1]) + event(bare) + DONE;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true }), [text]);
    expect({ client, usage: result.usage }).toEqual({ client: event(STREAM_CHUNKS[1]) + DONE, usage: USAGE });
  });
});

describe('SSE tap: events too big to inspect (maxEventBytes)', () => {
  const usageEvent = event(USAGE_CHUNK);
  const maxEventBytes = Buffer.byteLength(usageEvent);

  it('holds an incomplete event of exactly maxEventBytes, and meters it when it completes', () => {
    const last = usageEvent.length - 1;
    const tap = createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes: Buffer.byteLength(usageEvent.slice(0, last)) });
    const { client, result } = relay(tap, [usageEvent.slice(0, last), usageEvent.slice(last) + DONE]);
    expect({ client, usage: result.usage }).toEqual({ client: DONE, usage: USAGE });
  });

  it('meters a usage event of exactly maxEventBytes that arrives in two writes', () => {
    const at = 20;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes }), [usageEvent.slice(0, at), usageEvent.slice(at) + DONE]);
    expect({ client, usage: result.usage }).toEqual({ client: DONE, usage: USAGE });
  });

  it('counts only the held event’s bytes against the bound, not the events before it in the same write', () => {
    // The first write carries far more than maxEventBytes of whole events, then the usage event's first bytes.
    const before = event(STREAM_CHUNKS[1]).repeat(8);
    const at = 30;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes }), [before + usageEvent.slice(0, at), usageEvent.slice(at) + DONE]);
    expect({ client, usage: result.usage }).toEqual({ client: before + DONE, usage: USAGE });
  });

  it('relays an oversized event whole, uninspected, even when its end holds a usage data line', () => {
    const oversized = `: ${'x'.repeat(maxEventBytes * 2)}\n` + `data: ${JSON.stringify(USAGE_CHUNK)}\n\n`;
    const at = maxEventBytes + 10;
    const { client, result } = relay(createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes }), [oversized.slice(0, at), oversized.slice(at) + DONE]);
    expect({ client, usage: result.usage }).toEqual({ client: oversized + DONE, usage: null });
  });

  it('relays every byte of an oversized event spread over many writes, and meters the usage event after it', () => {
    const oversized = event({ ...STREAM_CHUNKS[1], padding: 'p'.repeat(maxEventBytes * 3) });
    const half = Math.floor(oversized.length / 2);
    const tap = createResponseTap(SSE, { dropUsageChunk: true, maxEventBytes });
    // Past the bound the event's bytes go on as they come: the middle write is relayed at once, not held.
    const writes = [oversized.slice(0, half), oversized.slice(half, half + 10), oversized.slice(half + 10)];
    expect(writes.map((w) => tap.write(Buffer.from(w)).toString())).toEqual(writes);
    const { client, result } = relay(tap, [usageEvent.slice(0, 25), usageEvent.slice(25) + DONE]);
    expect({ client, usage: result.usage, contentChunks: result.contentChunks }).toEqual({ client: DONE, usage: USAGE, contentChunks: 0 });
  });
});
