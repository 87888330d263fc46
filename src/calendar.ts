/**
 * UTC calendar arithmetic shared by limits (daily and monthly windows), the ledger's retention,
 * the admin API and the store's queries (day ranges). All of it is UTC: a budget or a
 * report never depends on where a gateway instance runs.
 */

export const DAY_MS = 86_400_000;

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day (`YYYY-MM-DD`) of an instant. */
export function utcDay(ms: number = Date.now()): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Midnight UTC of a `YYYY-MM-DD` day in ms, or NaN when it is not a real calendar day. */
export function dayStart(day: string): number {
  const match = DAY.exec(day);
  if (!match) return NaN;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(ms).toISOString().startsWith(day) ? ms : NaN;
}

/**
 * The instants `[start, end)` covering the inclusive UTC days `from`..`to`, as ISO strings
 * (the store's day-range queries); RangeError when either is not a `YYYY-MM-DD` calendar day.
 */
export function dayRange(from: string, to: string): { start: string; end: string } {
  const start = calendarDayStart(from, 'from');
  const end = calendarDayStart(to, 'to') + DAY_MS;
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}

function calendarDayStart(day: string, name: string): number {
  const ms = dayStart(day);
  if (Number.isNaN(ms)) throw new RangeError(`${name} must be a calendar day as YYYY-MM-DD, got "${day}"`);
  return ms;
}

/** Milliseconds from `now` until the next UTC midnight (never 0: at midnight, a whole day). */
export function msToUtcMidnight(now: number): number {
  return DAY_MS - (now % DAY_MS);
}

/** The first instant of `now`'s UTC month. */
export function utcMonthStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** Milliseconds from `now` until the first instant of the next UTC month. */
export function msToUtcMonthEnd(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now;
}

