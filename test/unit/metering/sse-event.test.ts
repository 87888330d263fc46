import { describe, expect, it } from 'vitest';
import { eventData, mayCarryUsage } from '../../../src/metering/index.js';

const bytes = (text: string): Buffer => Buffer.from(text);

describe('mayCarryUsage: which SSE events are worth parsing for usage', () => {
  it('passes an event whose usage is an object, also after a "usage":null of a nested object', () => {
    expect(mayCarryUsage(bytes('data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}'))).toBe(true);
    expect(mayCarryUsage(bytes('data: {"x":{"usage":null},"usage":{"prompt_tokens":3}}'))).toBe(true);
    expect(mayCarryUsage(bytes('data: {"usage": nul}'))).toBe(true);
    expect(mayCarryUsage(bytes('data: {"usage":nulL}'))).toBe(true);
    // Usage objects whose bytes end like "null" at the same offsets: only all four bytes make a null.
    expect(mayCarryUsage(bytes('data: {"usage":{"al":0,"prompt_tokens":3}}'))).toBe(true);
    expect(mayCarryUsage(bytes('data: {"usage":{"ll":0,"prompt_tokens":3}}'))).toBe(true);
  });

  it('skips the ordinary chunks of a usage-enabled stream ("usage":null) and events with no usage key', () => {
    expect(mayCarryUsage(bytes('data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}'))).toBe(false);
    expect(mayCarryUsage(bytes('data: {"usage" : null, "x":{"usage":null}}'))).toBe(false);
    expect(mayCarryUsage(bytes('data: {"choices":[]}'))).toBe(false);
    expect(mayCarryUsage(bytes('data: {"text":"the usage key"}'))).toBe(false);
    expect(mayCarryUsage(bytes(''))).toBe(false);
  });
});

describe('eventData: the data of one SSE event, per the grammar', () => {
  it.each([
    ['one data line, its one space dropped', 'data: {"a":1}', '{"a":1}'],
    ['no space after the colon', 'data:{"a":1}', '{"a":1}'],
    ['only the first space dropped', 'data:  x', ' x'],
    ['a bare "data" line: an empty value', 'data', ''],
    ['data lines joined by LF, other fields skipped', 'event: chunk\nid: 7\ndata: a\n: a comment\ndata:b\r\ndata', 'a\nb\n'],
    ['CR line ends', 'data: a\rdata: b', 'a\nb'],
  ])('%s', (_name, event, data) => {
    expect(eventData(bytes(event))).toBe(data);
  });

  it('answers null for an event with no data line (comments, event/id fields, a field that only starts like data)', () => {
    expect(eventData(bytes(': keep-alive'))).toBeNull();
    expect(eventData(bytes('event: ping\nid: 1'))).toBeNull();
    expect(eventData(bytes('datax: 1\ndat: 2'))).toBeNull();
    expect(eventData(bytes(''))).toBeNull();
  });
});
