import { describe, expect, it } from 'vitest';
import { StreamRefused, TopLevelStream, type StreamRefusal, type StreamedValue } from '../../../src/ownership/index.js';

/**
 * The streamed owner-field reader, case by case: each escape, constant and number form, the
 * structure's edges, the limits at their bounds, the first bytes, and when a refusal comes (at
 * the write that makes the body unreadable, not at its end: a 150 MB upload is not read to the
 * end to be refused). The generated-body tests (top-level-stream.test.ts, owner-fields-python)
 * hold it to the whole-body reader and python3; this table names what each rule is for.
 */

const WANTED = new Set(['model_id', 'name']);
const LIMITS = { maxDepth: 4, maxIntDigits: 5 };

type Reading = { readonly fields: ReadonlyArray<[string, StreamedValue]> } | { readonly refused: StreamRefusal['kind']; readonly at: 'write' | 'end' };

function readIn(parts: readonly Uint8Array[]): Reading {
  const fields: Array<[string, StreamedValue]> = [];
  const stream = new TopLevelStream(WANTED, LIMITS, (key, value) => fields.push([key, value]));
  let at: 'write' | 'end' = 'write';
  try {
    for (const part of parts) stream.write(part);
    at = 'end';
    stream.end();
  } catch (err) {
    if (err instanceof StreamRefused) return { refused: err.refusal.kind, at };
    throw err;
  }
  return { fields };
}

/** The reading of `body` fed whole, which must be the reading fed one byte at a time. */
function reading(body: string | readonly number[]): Reading {
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const whole = readIn([raw]);
  expect(readIn([...raw].map((byte) => Uint8Array.of(byte))), 'byte by byte').toEqual(whole);
  return whole;
}

const read = (...fields: Array<[string, StreamedValue]>): Reading => ({ fields });
const NONE = read();
/** Refused by the write that made the body unreadable. */
const refusedAtOnce = (kind: StreamRefusal['kind']): Reading => ({ refused: kind, at: 'write' });
/** Refused only when the body ended (it might still have become readable). */
const refusedAtEnd = (kind: StreamRefusal['kind']): Reading => ({ refused: kind, at: 'end' });

type Case = readonly [name: string, body: string | readonly number[], expected: Reading];

/** One test a case, each reading its body (whole and byte by byte) as `expected`. */
const readsAs = (title: string, cases: readonly Case[]): void =>
  it.each(cases)(title, (_name, body, expected) => {
    expect(reading(body)).toEqual(expected);
  });

describe('TopLevelStream, case by case', () => {
  it.each([
    ['\\"', '{"name":"a\\"b"}', 'a"b'],
    ['\\\\', '{"name":"a\\\\b"}', 'a\\b'],
    ['\\/', '{"name":"a\\/b"}', 'a/b'],
    ['\\b', '{"name":"a\\bb"}', 'a\bb'],
    ['\\f', '{"name":"a\\fb"}', 'a\fb'],
    ['\\n', '{"name":"a\\nb"}', 'a\nb'],
    ['\\r', '{"name":"a\\rb"}', 'a\rb'],
    ['\\t', '{"name":"a\\tb"}', 'a\tb'],
    ['\\u with digits', '{"name":"\\u0041\\u00e9"}', 'Aé'],
    ['\\u with the hex letters at both ends, either case', '{"name":"\\uaAfF"}', '\uaaff'],
  ])('decodes the escape %s in a wanted value', (_name, body, value) => {
    expect(reading(body)).toEqual(read(['name', value]));
  });

  it.each([
    ['g', '{"name":"\\u00g0"}'],
    ['G', '{"name":"\\u00G0"}'],
    ['@ (just below A)', '{"name":"\\u00@0"}'],
    ['` (just below a)', '{"name":"\\u00`0"}'],
    [': (between 9 and A)', '{"name":"\\u00:0"}'],
  ])('refuses a \\u escape with the non-hex character %s', (_name, body) => {
    expect(reading(body)).toEqual(refusedAtOnce('syntax'));
  });

  it('reads a wanted key written with an escape, and refuses an unknown escape', () => {
    expect(reading('{"n\\u0061me":"x"}')).toEqual(read(['name', 'x']));
    expect(reading('{"name":"a\\xb"}')).toEqual(refusedAtOnce('syntax'));
  });

  readsAs('takes or refuses %s inside a string', [
    ['a raw 0x1f', '{"a":"\u001f"}', refusedAtOnce('syntax')],
    ['a raw 0x00', '{"a":"\u0000"}', refusedAtOnce('syntax')],
    ['a space (0x20)', '{"a":" "}', NONE],
    ['DEL (0x7f)', '{"a":"\u007f"}', NONE],
  ]);

  readsAs('reads the constant %s', [
    ['null', '{"a":null,"name":null}', read(['name', undefined])],
    ['true', '{"a":true}', NONE],
    ['false', '{"a":false}', NONE],
    ['NaN', '{"a":NaN}', NONE],
    ['Infinity', '{"a":Infinity}', NONE],
    ['-Infinity', '{"a":-Infinity}', NONE],
    ['a constant misspelt', '{"a":nuxl}', refusedAtOnce('syntax')],
    ['a constant cut short', '{"a":fals}', refusedAtOnce('syntax')],
    ['-Inf', '{"a":-Inf}', refusedAtOnce('syntax')],
  ]);

  readsAs('reads the number %s', [
    ['0', '{"a":0}', NONE],
    ['-0', '{"a":-0}', NONE],
    ['0.5', '{"a":0.5}', NONE],
    ['1.5 followed by a member', '{"a":1.5,"b":2}', NONE],
    ['1e5', '{"a":1e5}', NONE],
    ['1E5', '{"a":1E5}', NONE],
    ['1e+5', '{"a":1e+5}', NONE],
    ['1.5e-3', '{"a":1.5e-3}', NONE],
    ['1.5E+3', '{"a":1.5E+3}', NONE],
    ['5 integer digits', '{"a":12345}', NONE],
    ['-12345', '{"a":-12345}', NONE],
    ['6 integer digits before a fraction (a float: no digit limit)', '{"a":123456.5}', NONE],
    ['6 integer digits', '{"a":123456}', refusedAtOnce('syntax')],
    ['-123456', '{"a":-123456}', refusedAtOnce('syntax')],
    ['01', '{"a":01}', refusedAtOnce('syntax')],
    ['-01', '{"a":-01}', refusedAtOnce('syntax')],
    ['1.', '{"a":1.}', refusedAtOnce('syntax')],
    ['1.e5', '{"a":1.e5}', refusedAtOnce('syntax')],
    ['.5', '{"a":.5}', refusedAtOnce('syntax')],
    ['- alone', '{"a":-}', refusedAtOnce('syntax')],
    ['-a', '{"a":-a}', refusedAtOnce('syntax')],
    ['1e with no digits', '{"a":1e}', refusedAtOnce('syntax')],
    ['1e, then more members', '{"a":1e,"b":1}', refusedAtOnce('syntax')],
    ['1e+ with no digits', '{"a":1e+}', refusedAtOnce('syntax')],
    ['1.5.3', '{"a":1.5.3}', refusedAtOnce('syntax')],
  ]);

  readsAs('reads the structure: %s', [
    ['an array at the top', '["name","x"]', refusedAtOnce('syntax')],
    ['members of an object in brackets', '["name":"x"}', refusedAtOnce('syntax')],
    ['a comma for a colon', '{"a",1}', refusedAtOnce('syntax')],
    ['a key without its opening quote', '{a":1}', refusedAtOnce('syntax')],
    ['text after the object', '{"a":1} x', refusedAtOnce('syntax')],
    ['whitespace after the object', '{"a":1} \n\t\r', NONE],
    ['an object never closed', '{"name":"x"', refusedAtEnd('syntax')],
    ['a string never closed', '{"name":"x', refusedAtEnd('syntax')],
    ['a \\u escape cut short', '{"name":"\\u12', refusedAtEnd('syntax')],
    ['depth 4 (the limit)', '{"a":[[[1]]]}', NONE],
    ['depth 5', '{"a":[[[[1]]]]}', refusedAtOnce('syntax')],
  ]);

  it('reports wanted keys of the top-level object only, each once', () => {
    expect(reading('{"a":{"name":"x","model_id":"y"},"b":[{"name":1}]}')).toEqual(NONE);
    expect(reading('{"a":{"name":1},"name":"y"}')).toEqual(read(['name', 'y']));
    expect(reading('{"name":["x"],"model_id":{"name":"z"}}')).toEqual(read(['name', undefined], ['model_id', undefined]));
    expect(reading('{"name":"x","names":"y","nam":"z","model_id_x":"w"}')).toEqual(read(['name', 'x']));
    expect(reading('{"name":"x","a":1,"name":"y"}')).toEqual({ refused: 'duplicate', at: 'write' });
    expect(reading('{"name":"\\ud800"}')).toEqual({ refused: 'surrogate', at: 'write' });
    expect(reading('{"a":"\\ud800"}')).toEqual(NONE);
  });

  readsAs('reads the first bytes and the encoding: %s', [
    ['a UTF-8 byte order mark', [0xef, 0xbb, 0xbf, ...Buffer.from('{"a":1}')], refusedAtOnce('encoding')],
    ['UTF-16 (a NUL among the first four bytes)', [...Buffer.from('{"a":1}', 'utf16le')], refusedAtOnce('encoding')],
    ['bytes that are not UTF-8', [...Buffer.from('{"a":"'), 0xff, ...Buffer.from('"}')], refusedAtOnce('encoding')],
    ['a character cut short at the very end', [...Buffer.from('{"a":1}'), 0xc3], refusedAtEnd('encoding')],
    ['a 3-byte character across the first four bytes', [...Buffer.from('{"€":1}')], NONE],
    ['¿ (0xc2 0xbf) as the second character', [...Buffer.from('{¿}')], refusedAtOnce('syntax')],
    ['a body shorter than four bytes', [...Buffer.from('{}')], NONE],
  ]);

  it('takes exactly four bytes for the encoding check, however the body is cut: a NUL in the fifth is a raw control character', () => {
    for (const parts of [['{', '"ab\u0000":1}'], ['{"', 'ab\u0000":1}'], ['{"a', 'b\u0000":1}']]) {
      expect(readIn(parts.map((part) => Buffer.from(part))), parts.join(' | ')).toEqual(refusedAtOnce('syntax'));
    }
    expect(readIn([Buffer.from('{'), Buffer.from('"name":"x"}')])).toEqual(read(['name', 'x']));
  });

  it('stays refused once it has refused: every later write and the end throw, even bytes that would read on from there', () => {
    const stream = new TopLevelStream(WANTED, LIMITS, () => undefined);
    expect(() => stream.write(Buffer.from('{"a":x'))).toThrow(StreamRefused);
    // Read on from where the refusal left it (a value wanted), `1}` would close a whole object.
    expect(() => stream.write(Buffer.from('1}'))).toThrow(StreamRefused);
    expect(() => stream.end()).toThrow(StreamRefused);
  });
});
