import { describe, expect, it } from 'vitest';
import { jsonKey, lastKeyValue, nextKeyValue, skipJsonSpace, valueEnd } from '../../../src/metering/index.js';

const USAGE = jsonKey('usage');
const bytes = (text: string): Buffer => Buffer.from(text);
/** The text of the value a scan found, up to the end valueEnd gives. */
const valueText = (text: string, start: number): string => text.slice(start, valueEnd(bytes(text), start));

describe('JSON key scans', () => {
  it('finds the value after the colon and any JSON whitespace', () => {
    const text = '{"id":1, "usage" \r\n:\t {"prompt_tokens":3}}';
    expect(valueText(text, nextKeyValue(bytes(text), USAGE))).toBe('{"prompt_tokens":3}');
    expect(valueText(text, lastKeyValue(bytes(text), USAGE))).toBe('{"prompt_tokens":3}');
  });

  it('passes over the name as a string value and as the end of a key with an escaped quote', () => {
    const text = '{"a":"usage","b\\"usage":{"x":1},"usage":{"y":2}}';
    expect(valueText(text, nextKeyValue(bytes(text), USAGE))).toBe('{"y":2}');
    expect(valueText(text, lastKeyValue(bytes(text), USAGE))).toBe('{"y":2}');
  });

  it('searching from the end, passes over the name as a value after the key, and finds a key at offset 0', () => {
    const text = '{"usage":{"prompt_tokens":1},"object":"usage","note":"b\\"usage"}';
    expect(valueText(text, lastKeyValue(bytes(text), USAGE))).toBe('{"prompt_tokens":1}');
    const atStart = '"usage":{"n":1},"x":"usage"';
    expect(valueText(atStart, lastKeyValue(bytes(atStart), USAGE))).toBe('{"n":1}');
  });

  it('tells the first key from the last', () => {
    const text = '{"usage":{"n":1},"choices":[{"usage":{"n":2}}]}';
    expect(valueText(text, nextKeyValue(bytes(text), USAGE))).toBe('{"n":1}');
    expect(valueText(text, lastKeyValue(bytes(text), USAGE))).toBe('{"n":2}');
    const second = nextKeyValue(bytes(text), USAGE, nextKeyValue(bytes(text), USAGE));
    expect(valueText(text, second)).toBe('{"n":2}');
  });

  it('answers -1 when the name is only ever text, including at offset 0 searching from the end', () => {
    for (const text of ['"usage"', '["usage","usage"]', '{"a":1}', '']) {
      expect(nextKeyValue(bytes(text), USAGE)).toBe(-1);
      expect(lastKeyValue(bytes(text), USAGE)).toBe(-1);
    }
  });

  it('ends a string value at its closing quote, past escaped quotes and braces', () => {
    const text = '{"model":"a\\"b}{c","usage":null}';
    expect(valueText(text, nextKeyValue(bytes(text), jsonKey('model')))).toBe('"a\\"b}{c"');
  });

  it('reports a value cut off by the end of the bytes as not ending', () => {
    const text = '{"usage":{"prompt_tokens":3';
    expect(valueEnd(bytes(text), nextKeyValue(bytes(text), USAGE))).toBe(-1);
  });

  it('skips JSON whitespace only', () => {
    expect(skipJsonSpace(bytes(' \t\r\n{'), 0)).toBe(4);
    expect(skipJsonSpace(bytes('\u00a0{'), 0)).toBe(0);
    expect(skipJsonSpace(bytes('   '), 1)).toBe(3);
  });
});
