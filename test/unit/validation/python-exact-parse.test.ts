import { describe, expect, it } from 'vitest';
import { jsonParseKeepsPythonValues } from '../../../src/python-json/index.js';

describe('jsonParseKeepsPythonValues', () => {
  const cases: ReadonlyArray<readonly [string, boolean, string]> = [
    ['{"model":"m","messages":[1,-2,"x",true,null,{}]}', true, 'strings, small ints and literals'],
    ['{"n":"1.0 1e5 123456789012345678 in a string"}', true, 'number-like text inside strings'],
    ['{"t":1.5}', false, 'a float (1.0 and 1.5 alike: the scan does not tell)'],
    ['[1e5]', false, 'an exponent'],
    ['[1234567890123456]', false, 'an integer of 16 digits'],
    ['[123456789012345]', true, 'an integer of 15 digits'],
    ['{"2":1,"a":2}', false, 'a key JS would move first'],
    ['{"\\u0032":1}', false, 'a key whose escapes might spell digits'],
    ['{"":2,"a1":3,"1a":4}', true, 'keys that are not all digits'],
  ];
  for (const [text, expected, what] of cases) {
    it(`is ${String(expected)} for ${what}`, () => {
      expect(jsonParseKeepsPythonValues(text)).toBe(expected);
    });
  }
});
