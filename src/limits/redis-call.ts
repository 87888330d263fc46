/**
 * What the Redis store keeps between a settle and the script call that carries it, and how it
 * packs a call's numbers.
 */
import type { Check, SpendWatch } from './store.js';

/** What waits to be sent for one scope: counter deltas by limit and window end (summed), and leases to release. */
export interface PendingScope {
  readonly deltas: Map<string, PendingDelta>;
  readonly released: string[];
}

/** A counter's summed settle; `watch` (a budget with alerts) hears where the counter lands. */
export interface PendingDelta {
  readonly kind: number;
  readonly end: number;
  delta: number;
  readonly check: Check;
  readonly watch: SpendWatch | undefined;
}

/** A settle the script's reply reports on: its number among the call's settles, and who listens. */
export interface WatchedSettle {
  readonly n: number;
  readonly delta: number;
  readonly check: Check;
  readonly watch: SpendWatch;
}

export const NO_NUMBERS = Buffer.alloc(0);

/** Doubles, little-endian: how the script takes and gives its numbers (struct '<d'). */
export function packDoubles(numbers: readonly number[]): Buffer {
  if (numbers.length === 0) return NO_NUMBERS;
  const buffer = Buffer.allocUnsafe(numbers.length * 8);
  for (let i = 0; i < numbers.length; i++) buffer.writeDoubleLE(numbers[i]!, i * 8);
  return buffer;
}

/** `<prefix>{team}:…` → `{team}`: keys with the same tag share a Cluster slot, so one script may take them. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  return open < 0 ? '' : key.slice(open, key.indexOf('}', open) + 1);
}

/** The script's arguments for some scopes (`keys`; key numbers are 1-based). */
export interface ScriptCall {
  lease: string;
  checks: number[];
  settles: number[];
  released: string;
  renewed: string;
  /** Settles whose landing the budget alerts hear (empty when alerts are off). */
  watched: WatchedSettle[];
}
