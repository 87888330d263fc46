import { describe, expect, it } from 'vitest';
import { PyFloat, PyInt, renderFastApiJson, renderFastApiJsonWithin } from '../../../src/python-json/index.js';

const within = (value: unknown, limit: number): string => renderFastApiJsonWithin(value, limit).text;

describe('renderFastApiJsonWithin', () => {
  it('gives renderFastApiJson\'s text, untruncated, when it fits the limit exactly', () => {
    const value = new Map<string, unknown>([['a', [new PyInt('1'), new PyFloat(2), 'é']], ['_sa', 1]]);
    const text = renderFastApiJson(value);
    expect(text).toBe('{"a":[1,2.0,"é"]}');
    expect(renderFastApiJsonWithin(value, Buffer.byteLength(text))).toEqual({ text, bytes: 18, truncated: false });
  });

  it('cuts a string that does not fit and ends it with …', () => {
    expect(renderFastApiJsonWithin('abcdefghijklmn', 13)).toEqual({ text: '"abcdefgh…"', bytes: 13, truncated: true });
  });

  it('counts escapes and non-ASCII characters in UTF-8 bytes, and never splits a surrogate pair', () => {
    expect(within('\u0001\u0001\u0001', 18)).toBe('"\\u0001\\u0001…"');
    expect(within('😀😀😀😀', 16)).toBe('"😀😀…"');
    expect(within('😀😀😀😀', 12)).toBe('"😀…"');
  });

  it('replaces the rest of a list by one "…" item and closes it', () => {
    expect(within([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 24)).toBe('[1,2,3,4,5,"…"]');
  });

  it('replaces the rest of a dict by a "…":"…" member and closes every open container', () => {
    const value = { a: { b: [{ c: 1 }, { d: 'x'.repeat(100) }] }, e: 2 };
    const text = within(value, 40);
    expect(text).toBe('{"a":{"b":[{"c":1},{"d":"xxxxxxx…"}]}}');
    expect(Buffer.byteLength(text)).toBe(40);
    expect(within({ k: new PyInt('9'.repeat(100)) }, 20)).toBe('{"…":"…"}');
  });

  it('replaces a top-level number that does not fit by "…"', () => {
    expect(within(new PyInt('1'.repeat(100)), 12)).toBe('"…"');
  });

  it('cuts deep nesting within the limit, closing every bracket it opened', () => {
    const deep: unknown[] = [];
    let inner = deep;
    for (let i = 0; i < 100_000; i++) {
      const next: unknown[] = [];
      inner.push(next);
      inner = next;
    }
    const { text, bytes, truncated } = renderFastApiJsonWithin(deep, 1000);
    expect(truncated).toBe(true);
    expect(bytes).toBeLessThanOrEqual(1000);
    expect(() => JSON.parse(text) as unknown).not.toThrow();
  });
});
