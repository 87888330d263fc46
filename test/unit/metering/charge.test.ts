import { describe, expect, it } from 'vitest';
import { type ChargeBasis, chargeFor, createPriceBook, type TapResult } from '../../../src/metering/index.js';

/**
 * SPEC 14: a row's cost is prompt tokens × the prompt price plus completion tokens × the
 * completion price (per million), in nano-units. Prices and counts are asymmetric throughout,
 * so prices swapped (or counts swapped) give another number.
 */
const book = createPriceBook({
  currency: 'USD',
  models: { 'acme/*': { prompt: 2, completion: 10 }, 'acme/cheap-*': { prompt: 0.5, completion: 1.5 } },
});

const seen = (usage: TapResult['usage']): TapResult => ({ tail: null, usage, invalidUsage: false, model: null, contentChunks: 0, completionBytes: 0 });
const basis = (model: string, changes: Partial<ChargeBasis> = {}): ChargeBasis => ({ model, meteredByTokens: true, answered: true, promptTokens: 0, seen: undefined, ...changes });

describe('the cost of a ledger row', () => {
  it('prices prompt and completion tokens each at their own price', () => {
    // 1000 × 2 + 30 × 10 per million = 0.0023 USD (swapped prices: 0.01006; swapped counts: 0.02006).
    expect(book.costNanos('acme/big', { prompt_tokens: 1000, completion_tokens: 30 })).toBe(2_300_000);
    expect(book.costNanos('acme/big', { prompt_tokens: 0, completion_tokens: 7 })).toBe(70_000);
    expect(book.costNanos('acme/big', { prompt_tokens: 7, completion_tokens: 0 })).toBe(14_000);
  });

  it('uses the longest matching pattern, and charges 0 for an unpriced model', () => {
    expect(book.costNanos('acme/cheap-1', { prompt_tokens: 1000, completion_tokens: 30 })).toBe(545_000);
    expect(book.costNanos('other/model', { prompt_tokens: 1000, completion_tokens: 30 })).toBe(0);
  });

  it('charges the usage the upstream reported, at the model\'s prices', () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 30, total_tokens: 1030 };
    expect(chargeFor(basis('acme/big', { promptTokens: 5, seen: seen(usage) }), book)).toEqual({ usage, costNanos: 2_300_000, estimated: false });
  });

  it('charges an unfinished 2xx reply its estimate: prompt estimate at the prompt price, chunks at the completion price', () => {
    const unfinished = { ...seen(null), contentChunks: 30, completionBytes: 40 };
    expect(chargeFor(basis('acme/big', { promptTokens: 1000, seen: unfinished }), book)).toEqual({
      usage: { prompt_tokens: 1000, completion_tokens: 30, total_tokens: 1030 },
      costNanos: 2_300_000,
      estimated: true,
    });
  });

  it('charges nothing for a request that got no 2xx answer', () => {
    expect(chargeFor(basis('acme/big', { promptTokens: 1000, answered: false }), book)).toEqual({
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      costNanos: 0,
      estimated: false,
    });
  });

  it('charges nothing for a reply not metered by tokens, even a 2xx one', () => {
    expect(chargeFor(basis('acme/big', { promptTokens: 1000, meteredByTokens: false, seen: { ...seen(null), contentChunks: 3 } }), book)).toEqual({
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      costNanos: 0,
      estimated: false,
    });
  });

  it('estimates completion tokens from bytes / 4, rounded up, when they outnumber the chunks', () => {
    const unfinished = { ...seen(null), contentChunks: 2, completionBytes: 401 };
    expect(chargeFor(basis('acme/big', { promptTokens: 10, seen: unfinished }), book)).toEqual({
      usage: { prompt_tokens: 10, completion_tokens: 101, total_tokens: 111 },
      costNanos: 10 * 2000 + 101 * 10_000,
      estimated: true,
    });
  });

  it('charges the prompt estimate alone for a 2xx reply nothing was seen of', () => {
    expect(chargeFor(basis('acme/big', { promptTokens: 7 }), book)).toEqual({
      usage: { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 },
      costNanos: 14_000,
      estimated: true,
    });
  });
});
