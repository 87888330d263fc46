import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withTopLevelString } from '../../../src/python-json/index.js';

const rewrite = (text: string, value = 'T'): string | undefined => withTopLevelString(Buffer.from(text), 'model', value)?.toString('utf8');

describe('withTopLevelString: the model member rewritten, every other byte as sent (SPEC 22)', () => {
  it.each([
    ['a plain body', '{"model":"a","messages":[]}', '{"model":"T","messages":[]}'],
    ['whitespace around the member kept', '{ "model" :  "a" , "n":1}', '{ "model" :  "T" , "n":1}'],
    ['the last of duplicate keys (what Python keeps)', '{"model":"a","x":{"model":"b"},"model":"c"}', '{"model":"a","x":{"model":"b"},"model":"T"}'],
    ['a key written with escapes', '{"mod\\u0065l":"a"}', '{"mod\\u0065l":"T"}'],
    ['a nested model left alone', '{"messages":[{"model":"m","content":"\\"model\\":\\"x\\""}],"model":"a"}', '{"messages":[{"model":"m","content":"\\"model\\":\\"x\\""}],"model":"T"}'],
    ['multi-byte text around it', '{"content":"héllo 世界","model":"a"}', '{"content":"héllo 世界","model":"T"}'],
    ['a value with escapes replaced whole', '{"model":"a\\"b\\\\"}', '{"model":"T"}'],
  ])('%s', (_name, text, expected) => {
    expect(rewrite(text)).toBe(expected);
  });

  it('writes the new value as a JSON string', () => {
    expect(rewrite('{"model":"a"}', 'quo"te/é')).toBe('{"model":"quo\\"te/é"}');
  });

  it('answers undefined for an object without the member', () => {
    expect(rewrite('{"messages":[{"model":"a"}]}')).toBeUndefined();
  });

  it('leaves what JSON.parse reads unchanged except model, for any object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), fc.string(), (rest, before, after) => {
        const text = JSON.stringify({ ...rest, model: before });
        const out = rewrite(text, after)!;
        expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify({ ...rest, model: after })));
      }),
    );
  });
});
