import { describe, expect, it } from 'vitest';
import { isCheapToParse } from '../../../src/validation/index.js';

const limits = { maxStructures: 10, maxDepth: 3 };
const cheap = (text: string): boolean => isCheapToParse(Buffer.from(text), limits);

describe('isCheapToParse', () => {
  it('counts containers and keys, and stops past either bound', () => {
    expect(cheap('{"a":1,"b":[1,2,3],"c":{"d":"e"}}')).toBe(true);
    expect(cheap(`[${Array(10).fill('{}').join(',')}]`)).toBe(false);
    expect(cheap(`{${Array.from({ length: 10 }, (_, i) => `"k${i}":1`).join(',')}}`)).toBe(false);
  });

  it('bounds the depth', () => {
    expect(cheap('[[[1]]]')).toBe(true);
    expect(cheap('[[[[1]]]]')).toBe(false);
  });

  it('does not count brackets, colons or escaped quotes inside strings', () => {
    expect(cheap('{"a":"[[[[{{{{::::\\"[[[[\\\\"}')).toBe(true);
    expect(cheap('{"a":"\\\\"}[[[[')).toBe(false);
  });

  it('never calls UTF-16 or UTF-32 text cheap', () => {
    expect(isCheapToParse(Buffer.from('\ufeff{}', 'utf16le'), limits)).toBe(false);
  });
});
