import { describe, expect, it } from 'vitest';
import { renderValidationBody } from '../../../src/validation/index.js';
import { pythonFloatRepr } from '../../../src/python-json/index.js';

describe('pythonFloatRepr matches Python repr(float)', () => {
  const cases: ReadonlyArray<readonly [number, string]> = [
    [1, '1.0'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.1, '0.1'],
    [-1.5, '-1.5'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [123456789012345680000, '1.2345678901234568e+20'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [2.5e-7, '2.5e-07'],
    [1e100, '1e+100'],
    [5e-324, '5e-324'],
    [1234.5, '1234.5'],
  ];
  for (const [value, repr] of cases) {
    it(`renders ${String(value)} as ${repr}`, () => {
      expect(pythonFloatRepr(value)).toBe(repr);
    });
  }
});

describe('renderValidationBody', () => {
  it('renders hand-built items with compact separators and ctx last', () => {
    expect(
      renderValidationBody([
        { type: 'json_invalid', loc: ['body', 3], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } },
        { type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: { a: [1, 2.5, 'é', null] } },
      ]),
    ).toBe(
      '{"detail":[{"type":"json_invalid","loc":["body",3],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}},' +
        '{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":{"a":[1,2.5,"é",null]}}]}',
    );
  });

  it('renders an empty list as an empty detail', () => {
    expect(renderValidationBody([])).toBe('{"detail":[]}');
  });

  it('renders a non-finite number as null, keeping the body valid JSON', () => {
    expect(renderValidationBody([{ type: 't', loc: ['body'], msg: 'm', input: Number.NaN }])).toBe(
      '{"detail":[{"type":"t","loc":["body"],"msg":"m","input":null}]}',
    );
  });
});
