import { describe, expect, it } from 'vitest';
import { MAX_DETAIL_ITEMS, MAX_VALIDATION_BODY_BYTES, renderValidationBody, validateChatBody } from '../../../src/validation/index.js';

// Bounds of the 422 (a documented deviation from FastAPI, which lists every error and echoes
// every input whole): at most 100 items plus one counting the rest, and echoed inputs that
// share one budget, so no 422 exceeds MAX_VALIDATION_BODY_BYTES.

interface Item {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

function answer(body: string | Buffer, contentType: string | undefined = 'application/json'): { text: string; detail: Item[] } {
  const result = validateChatBody(Buffer.isBuffer(body) ? body : Buffer.from(body), contentType);
  if (result.ok) throw new Error('expected a 422');
  const text = renderValidationBody(result.detail);
  return { text, detail: (JSON.parse(text) as { detail: Item[] }).detail };
}

const notObjects = (count: number, item = '1'): string => `{"model":"m","messages":[${Array(count).fill(item).join(',')}]}`;

describe('a 422 lists at most 100 errors', () => {
  it('lists a million wrong messages as 100 items and one counting the 999,900 others', () => {
    const { text, detail } = answer(notObjects(1_000_000));
    expect(detail).toHaveLength(MAX_DETAIL_ITEMS + 1);
    expect(detail[99]).toEqual({ type: 'dict_type', loc: ['body', 'messages', 99], msg: 'Input should be a valid dictionary', input: 1 });
    expect(detail[100]).toEqual({
      type: 'too_many_errors',
      loc: ['body'],
      msg: '999900 more errors not listed',
      input: null,
      ctx: { omitted: 999900 },
    });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
  });

  it('lists exactly 100 errors as FastAPI does, with no counting item', () => {
    const { detail } = answer(notObjects(100));
    expect(detail).toHaveLength(100);
    expect(detail.map((item) => item.type)).not.toContain('too_many_errors');
  });

  it('counts the one error left out of 101', () => {
    const { detail } = answer(`{"model":1,"messages":[${Array(100).fill('2').join(',')}]}`);
    expect(detail).toHaveLength(101);
    expect(detail[0]!.loc).toEqual(['body', 'model']);
    expect(detail[99]!.loc).toEqual(['body', 'messages', 98]);
    expect(detail[100]).toMatchObject({ type: 'too_many_errors', msg: '1 more errors not listed', ctx: { omitted: 1 } });
  });
});

describe('echoed inputs share a budget', () => {
  it('does not echo an 8 MB body without model whole: the input is cut, valid JSON, still an object', () => {
    const content = 'x'.repeat(8 * 1024 * 1024);
    const { text, detail } = answer(JSON.stringify({ messages: [{ role: 'user', content }] }));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
    expect(detail).toHaveLength(1);
    const input = detail[0]!.input as { messages: { role: string; content: string }[] };
    expect(input.messages[0]!.role).toBe('user');
    expect(input.messages[0]!.content).toMatch(/^x+…$/);
  });

  it('echoes a body twice in full when both fields are missing and it fits', () => {
    const body = JSON.stringify({ temperature: 1, note: 'n'.repeat(1000) });
    const { detail } = answer(body);
    expect(detail.map((item) => item.input)).toEqual([JSON.parse(body), JSON.parse(body)]);
  });

  it('keeps short inputs exact after a large echo has spent the budget', () => {
    const { detail } = answer(`{"model":"m","messages":["${'s'.repeat(20_000)}",7,{"a":1},[true]]}`);
    expect((detail[0]!.input as string).endsWith('…')).toBe(true);
    expect(detail.slice(1).map((item) => item.input)).toEqual([7, [true]]);
  });

  it('cuts raw text sent with a non-JSON Content-Type', () => {
    const { text, detail } = answer('"\u0001'.repeat(1_000_000), 'text/plain');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
    expect(detail[0]!.input).toMatch(/^("\u0001)+"?…$/);
  });

  it('closes every container of a deeply nested input it cuts', () => {
    const depth = 100_000;
    const { text, detail } = answer(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
    expect(detail[0]!.type).toBe('model_attributes_type');
  });

  it('stays within MAX_VALIDATION_BODY_BYTES at worst: long non-ASCII inputs in 2 or 101 items', () => {
    const item = JSON.stringify('é😀\u0001'.repeat(1000));
    const { text, detail } = answer(`{"x":[${Array(200).fill(item).join(',')}]}`);
    expect(detail).toHaveLength(2);
    const many = answer(`{"model":{"k":${item}},"messages":[${Array(150).fill(item).join(',')}]}`);
    expect(many.detail).toHaveLength(101);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
    expect(Buffer.byteLength(many.text)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
  });
});
