import type { Config } from '../config/index.js';

/** A model's price per million tokens, in the price currency. */
export interface Price {
  readonly prompt: number;
  readonly completion: number;
}

/** Token counts a cost is computed from. */
export interface TokenCounts {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

export interface PriceBook {
  readonly currency: string;
  /** The price of a model (the longest matching pattern), or undefined: it costs 0. */
  priceOf(model: string): Price | undefined;
  /** What tokens of a model cost, in whole nano-units of the currency (0 for an unpriced model). */
  costNanos(model: string, tokens: TokenCounts): number;
}

/** Distinct model names whose price is remembered (model names come from clients). */
const MAX_CACHED_MODELS = 10_000;

/** `*` matches any run of characters; everything else literally. */
function patternToRegExp(pattern: string): RegExp {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`);
}

/**
 * Builds the price book once from `metering.prices` (SPEC 14): per-model prices per million
 * tokens, `*` patterns, the longest matching pattern winning. Lookups are cached per model.
 */
export function createPriceBook(prices: Config['metering']['prices']): PriceBook {
  const patterns = Object.entries(prices.models)
    .map(([pattern, price]) => ({ pattern, price, regex: patternToRegExp(pattern) }))
    // Longest pattern first: the most specific one wins. Ties: literal characters over wildcards.
    .sort((a, b) => b.pattern.length - a.pattern.length || a.pattern.split('*').length - b.pattern.split('*').length);
  const cache = new Map<string, Price | null>();
  const priceOf = (model: string): Price | undefined => {
    let price = cache.get(model);
    if (price === undefined) {
      price = patterns.find((p) => p.regex.test(model))?.price ?? null;
      if (cache.size >= MAX_CACHED_MODELS) cache.clear();
      cache.set(model, price);
    }
    return price ?? undefined;
  };
  return {
    currency: prices.currency,
    priceOf,
    costNanos(model, tokens) {
      const price = priceOf(model);
      if (price === undefined) return 0;
      // Per million tokens → nano-units per token is × 1000; rounded once, at the end.
      return Math.round(tokens.prompt_tokens * price.prompt * 1000 + tokens.completion_tokens * price.completion * 1000);
    },
  };
}
