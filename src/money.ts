/**
 * Money as the gateway counts it: whole nano-units (1e-9) of the price currency. Counters in
 * Redis and sums in the ledger stay integers, so totals are exact to the cent and far below;
 * 2^53 nano-units is about 9 million currency units per counter, per request row far more than enough.
 */
export const NANOS_PER_UNIT = 1e9;

/** Nano-units of a currency amount (`2.5` → 2,500,000,000). */
export function toNanos(amount: number): number {
  return Math.round(amount * NANOS_PER_UNIT);
}

/** A nano-unit amount as a plain decimal, never in exponent form: 600 → `0.0000006`. */
export function formatNanos(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(Math.round(nanos));
  const whole = Math.floor(abs / NANOS_PER_UNIT);
  const fraction = String(abs % NANOS_PER_UNIT).padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** A nano-unit amount as a JSON number in currency units (`cost` fields). */
export function nanosToAmount(nanos: number): number {
  return Number(formatNanos(nanos));
}
