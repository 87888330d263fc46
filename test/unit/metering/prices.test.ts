import { describe, expect, it } from 'vitest';
import { createPriceBook } from '../../../src/metering/index.js';

const tokens = { prompt_tokens: 1000, completion_tokens: 30 };

// Which price a model gets decides every cost in the ledger and every budget: a pattern that
// matches too much, or the wrong one of two matching patterns, bills another model's price.
describe('the price book', () => {
  it('reads pattern characters other than * literally, anchored at both ends', () => {
    const book = createPriceBook({ currency: 'USD', models: { 'acme/gpt-4.1': { prompt: 2, completion: 10 }, 'x(1)+': { prompt: 1, completion: 1 } } });
    expect(book.priceOf('acme/gpt-4.1')).toEqual({ prompt: 2, completion: 10 });
    expect(book.priceOf('acme/gpt-4x1')).toBeUndefined();
    expect(book.priceOf('acme/gpt-4.1-mini')).toBeUndefined();
    expect(book.priceOf('eu/acme/gpt-4.1')).toBeUndefined();
    expect(book.priceOf('x(1)+')).toEqual({ prompt: 1, completion: 1 });
    expect(book.priceOf('x11')).toBeUndefined();
  });

  it('lets * match any run of characters, none included', () => {
    const book = createPriceBook({ currency: 'USD', models: { 'acme/*-mini': { prompt: 1, completion: 2 } } });
    expect(book.priceOf('acme/-mini')).toEqual({ prompt: 1, completion: 2 });
    expect(book.priceOf('acme/gpt/4-mini')).toEqual({ prompt: 1, completion: 2 });
    expect(book.priceOf('acme/gpt-4')).toBeUndefined();
  });

  it('prefers the longer pattern, and at equal length the one with fewer wildcards, whatever the order given', () => {
    const book = createPriceBook({
      currency: 'USD',
      models: { 'acme/*': { prompt: 1, completion: 1 }, 'acme/x': { prompt: 3, completion: 3 }, 'acme/long-*': { prompt: 5, completion: 5 } },
    });
    expect(book.priceOf('acme/x')).toEqual({ prompt: 3, completion: 3 });
    expect(book.priceOf('acme/long-1')).toEqual({ prompt: 5, completion: 5 });
    expect(book.priceOf('acme/y')).toEqual({ prompt: 1, completion: 1 });
  });

  it.each([
    ['wildcard pattern first', { 'acme/*': { prompt: 1, completion: 1 }, 'acme/x': { prompt: 3, completion: 3 } }],
    ['literal pattern first', { 'acme/x': { prompt: 3, completion: 3 }, 'acme/*': { prompt: 1, completion: 1 } }],
    ['two wildcards against one', { 'a**': { prompt: 1, completion: 1 }, 'ab*': { prompt: 3, completion: 3 } }],
    ['one wildcard against two', { 'ab*': { prompt: 3, completion: 3 }, 'a**': { prompt: 1, completion: 1 } }],
  ])('breaks a tie of lengths for the pattern with fewer wildcards (%s)', (_, models) => {
    const book = createPriceBook({ currency: 'USD', models });
    expect(book.priceOf(Object.keys(models).includes('ab*') ? 'abx' : 'acme/x')).toEqual({ prompt: 3, completion: 3 });
  });

  it('answers the same price on a second lookup (cached) and 0 for an unpriced model', () => {
    const book = createPriceBook({ currency: 'EUR', models: { 'acme/*': { prompt: 2, completion: 10 } } });
    expect(book.currency).toBe('EUR');
    expect(book.costNanos('acme/a', tokens)).toBe(2_300_000);
    expect(book.costNanos('acme/a', tokens)).toBe(2_300_000);
    expect(book.costNanos('other', tokens)).toBe(0);
    expect(book.costNanos('other', tokens)).toBe(0);
  });

  it('rounds to whole nano-units once, at the end', () => {
    // 1 × 0.0007 + 1 × 0.0004 per million = 1.1 nanos → 1; 0.7 alone → 1 (not truncated to 0).
    const book = createPriceBook({ currency: 'USD', models: { m: { prompt: 0.0007, completion: 0.0004 } } });
    expect(book.costNanos('m', { prompt_tokens: 1, completion_tokens: 1 })).toBe(1);
    expect(book.costNanos('m', { prompt_tokens: 1, completion_tokens: 0 })).toBe(1);
    expect(book.costNanos('m', { prompt_tokens: 3, completion_tokens: 3 })).toBe(3);
  });
});
