import type { PriceBook } from './prices.js';
import type { TapResult } from './taps/tap.js';
import type { Usage } from './taps/usage.js';

/** What one request is charged: the tokens recorded and settled against limits, and their cost. */
export interface Charge {
  readonly usage: Usage;
  /** Nano-units of the price currency. */
  readonly costNanos: number;
  /** No usage was read from the upstream: the tokens are the gateway's estimate (SPEC 6.4). */
  readonly estimated: boolean;
}

/** What the gateway knows about a forwarded request when it is over. */
export interface ChargeBasis {
  /** The model it is priced as. */
  readonly model: string;
  /** Whether its reply is metered by tokens (chat) at all. */
  readonly meteredByTokens: boolean;
  /** The upstream answered 2xx: it started generating, so an unfinished reply still cost tokens. */
  readonly answered: boolean;
  /** ceil(prompt characters / 4), the prompt estimate of SPEC 6.3. */
  readonly promptTokens: number;
  /** What the response tap saw, if the reply was tapped. */
  readonly seen: TapResult | undefined;
}

const NOTHING: Usage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/**
 * SPEC 6.4: usage the upstream reported is what is charged, whatever the client did after it
 * was read. A 2xx reply that ended without it (client abort, upstream break, idle cut) is still
 * charged an estimate: the prompt estimate plus one completion token per content chunk
 * relayed, or completion characters / 4 (bytes here), whichever is larger. A request that got
 * no 2xx answer is charged nothing.
 */
export function chargeFor(basis: ChargeBasis, prices: PriceBook): Charge {
  const reported = basis.seen?.usage ?? null;
  if (reported) return { usage: reported, costNanos: prices.costNanos(basis.model, reported), estimated: false };
  if (!basis.meteredByTokens || !basis.answered) return { usage: NOTHING, costNanos: 0, estimated: false };
  const completion = Math.max(basis.seen?.contentChunks ?? 0, Math.ceil((basis.seen?.completionBytes ?? 0) / 4));
  const usage = { prompt_tokens: basis.promptTokens, completion_tokens: completion, total_tokens: basis.promptTokens + completion };
  return { usage, costNanos: prices.costNanos(basis.model, usage), estimated: true };
}
