import { describe, expect, it } from 'vitest';
import { renderValidationBody, validateChatBody } from '../../../src/validation/index.js';
import { decodePythonJson, PyFloat, PyInt, pythonJsonError } from '../../../src/python-json/index.js';

// Messages and positions are CPython 3.12's json.loads (checked against a real interpreter).

function jsonInvalid(pos: number, error: string): string {
  return `{"detail":[{"type":"json_invalid","loc":["body",${pos}],"msg":"JSON decode error","input":{},"ctx":{"error":${JSON.stringify(error)}}}]}`;
}

function answer(body: string): string {
  const result = validateChatBody(Buffer.from(body), 'application/json');
  return result.ok ? 'OK' : renderValidationBody(result.detail);
}

describe('json_invalid carries Python\'s JSONDecodeError message and character offset', () => {
  const cases: ReadonlyArray<readonly [string, string, number, string]> = [
    ['a trailing comma in an object', '{"model":"m","messages":[],}', 27, 'Expecting property name enclosed in double quotes'],
    ['a trailing comma in an array', '{"model":"m","messages":[{"a":1},]}', 33, 'Expecting value'],
    ['an unterminated string', '{"model":"m', 9, 'Unterminated string starting at'],
    ['data after the value', '{"model":"m","messages":[]} x', 28, 'Extra data'],
    ['an unquoted key', '{model:"m"}', 1, 'Expecting property name enclosed in double quotes'],
    ['an empty key without quotes', '{:"m"}', 1, 'Expecting property name enclosed in double quotes'],
    ['a raw control character in a string', '{"model":"a\tb"}', 11, 'Invalid control character at'],
    ['non-ASCII (an astral emoji) before the error', '{"model":"é😀","messages":[] x}', 28, "Expecting ',' delimiter"],
    ['CJK text before the error', '{"model":"日本語","messages":[], "x": ]}', 35, 'Expecting value'],
    ['a missing colon', '{"model" "m"}', 9, "Expecting ':' delimiter"],
    ['a missing comma', '{"model":"m" "messages":[]}', 13, "Expecting ',' delimiter"],
    ['an unknown escape', '{"model":"\\q"}', 10, 'Invalid \\escape'],
    ['a bad \\u escape', '{"model":"\\u12G4"}', 11, 'Invalid \\uXXXX escape'],
    ['whitespace only', '   ', 3, 'Expecting value'],
    ['a leading zero', '{"n":01}', 6, "Expecting ',' delimiter"],
    ['a truncated literal', 'tru', 0, 'Expecting value'],
    ['a body cut after a comma', '{"model":"m","messages":[1,', 27, 'Expecting value'],
  ];

  for (const [what, body, pos, error] of cases) {
    it(`answers "${error}" at ${pos} for ${what}`, () => {
      expect(answer(body)).toBe(jsonInvalid(pos, error));
    });
  }
});

describe('decodePythonJson', () => {
  it('keeps ints, floats, key order and repeated keys as Python does', () => {
    const result = decodePythonJson('{"b":1,"2":2.0,"b":-0,"big":12345678901234567890123}');
    expect(result).toEqual({
      ok: true,
      value: new Map<string, unknown>([
        ['b', new PyInt('0')],
        ['2', new PyFloat(2)],
        ['big', new PyInt('12345678901234567890123')],
      ]),
    });
  });

  it('joins escaped surrogate pairs and keeps a lone surrogate', () => {
    expect(decodePythonJson('"\\ud83d\\ude00\\ud800x"')).toEqual({ ok: true, value: '😀\ud800x' });
  });

  it('backtracks over an exponent without digits, leaving extra data', () => {
    expect(decodePythonJson('1e+')).toEqual({ ok: false, msg: 'Extra data', pos: 1 });
  });

  it('does not overflow the stack on deeply nested input', () => {
    const depth = 200_000;
    expect(decodePythonJson('['.repeat(depth))).toEqual({ ok: false, msg: 'Expecting value', pos: depth });
    const nested = decodePythonJson(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(nested.ok).toBe(true);
  });
});

describe('pythonJsonError', () => {
  it('finds decodePythonJson\'s message and position without keeping values', () => {
    for (const text of ['{"a":[1,2,{"b":3}],}', '[1, 2', '{"a" 1}', `${'[{"k":'.repeat(1000)}x`, '"\\q"', '1 2']) {
      const decoded = decodePythonJson(text);
      expect(decoded.ok).toBe(false);
      expect(pythonJsonError(text)).toEqual(decoded.ok ? undefined : { msg: decoded.msg, pos: decoded.pos });
    }
  });

  it('answers undefined for text Python reads, NaN included', () => {
    expect(pythonJsonError('{"a":[NaN,{"b":-Infinity}],"c":"d"}')).toBeUndefined();
  });
});
