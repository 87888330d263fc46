import { describe, expect, it } from 'vitest';
import { readReply, scanJsonReply, type ReplyFacts } from '../../../src/tracing/index.js';

const bytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value, null, value && typeof value === 'object' && 'pretty' in value ? 2 : undefined));

/** What JSON.parse reads (readReply), but for the text, which the scan leaves empty. */
const parsed = (reply: Buffer): ReplyFacts => ({ ...readReply(reply), text: '' });

describe('scanJsonReply: a JSON reply\'s id and finish reasons without parsing it', () => {
  const replies: Record<string, unknown> = {
    'an ordinary reply': { id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi', tool_calls: [] }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } },
    'several choices, one without a reason': { id: 'c', choices: [{ finish_reason: 'stop' }, { finish_reason: null }, { finish_reason: 'length' }] },
    'choices before the id, with tool call ids and reasons nested deeper': {
      choices: [{ message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"id":"x","finish_reason":"y"}' } }], finish_reason: 'deep' }, finish_reason: 'tool_calls' }],
      id: 'chatcmpl-2',
    },
    'quotes, backslashes and keys inside strings': { id: 'a"b\\', choices: [{ message: { content: '"finish_reason": "fake", "id": "no" \\' }, finish_reason: 'stop' }] },
    'a top-level finish_reason and an id that is not a string': { id: 7, finish_reason: 'top', choices: [] },
    'choices that are not an array': { id: 'x', choices: { 0: { finish_reason: 'stop' } } },
    'pretty-printed': { pretty: true, id: 'p', choices: [{ finish_reason: 'stop' }] },
    'no choices': { id: 'e', error: { message: 'finish_reason' } },
    'non-ASCII without escapes, and an escaped newline and unicode': { id: 'chatcmpl-é😀', choices: [{ finish_reason: 'stop\nnext\u0007' }] },
  };
  for (const [name, reply] of Object.entries(replies)) {
    it(`reads what JSON.parse reads: ${name}`, () => {
      const body = bytes(reply);
      expect(scanJsonReply(body)).toEqual(parsed(body));
    });
  }

  it('keeps the last of duplicate keys, as JSON.parse does', () => {
    const body = Buffer.from('{"id":"first","choices":[{"finish_reason":"a"}],"id":"last"}');
    expect(scanJsonReply(body)).toEqual({ id: 'last', finishReasons: ['a'], text: '' });
    expect(parsed(body)).toEqual({ id: 'last', finishReasons: ['a'], text: '' });
  });

  it('answers undefined for what is not a JSON object, and what it saw of a cut-off one', () => {
    expect(scanJsonReply(Buffer.from('data: {"id":"s"}\n\n'))).toBeUndefined();
    expect(scanJsonReply(Buffer.from('  [1]'))).toBeUndefined();
    expect(scanJsonReply(Buffer.from(''))).toBeUndefined();
    expect(scanJsonReply(Buffer.from('{"id":"cut","choices":[{"finish_reason":"stop"},{"finish_reason":"le'))).toEqual({ id: 'cut', finishReasons: ['stop'], text: '' });
    // A raw control character is not JSON: JSON.parse refuses that string, and so does the scan.
    expect(scanJsonReply(Buffer.from('{"id":"a\tb","choices":[{"finish_reason":"stop"}]}'))).toEqual({ finishReasons: ['stop'], text: '' });
  });
});
