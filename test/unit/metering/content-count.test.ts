import { describe, expect, it } from 'vitest';
import { contentBytes } from '../../../src/metering/index.js';

/** What an aborted stream is charged by (SPEC 14.2): the raw bytes of each chunk's first "content" string. */
describe('contentBytes', () => {
  it.each([
    ['a plain string', 'data: {"choices":[{"delta":{"content":"hello"}}]}', 5],
    ['escapes counted as sent', 'data: {"choices":[{"delta":{"content":"a\\"b\\\\"}}]}', 6],
    ['the first content only', 'data: {"content":"ab","x":{"content":"abcdef"}}', 2],
    ['an empty string', 'data: {"content":""}', 0],
    ['content that is not a string', 'data: {"content":null}', 0],
    ['content that is a number', 'data: {"content":12345}', 0],
    ['no content key', 'data: {"choices":[{"delta":{"role":"assistant"}}]}', 0],
    ['"content" as a value, not a key', 'data: {"type":"content"}', 0],
    ['a string the chunk cuts off: what arrived of it', 'data: {"content":"abc', 3],
    ['a string cut after an escape', 'data: {"content":"ab\\', 3],
  ])('%s', (_name, event, bytes) => {
    expect(contentBytes(Buffer.from(event))).toBe(bytes);
  });
});
