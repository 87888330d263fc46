const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** Midnight UTC of a `YYYY-MM-DD` calendar day, in ms; RangeError for anything else. */
function dayStartMs(day: string, name: string): number {
  const match = DAY.exec(day);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (Number.isNaN(ms) || !new Date(ms).toISOString().startsWith(day)) throw new RangeError(`${name} must be a calendar day as YYYY-MM-DD, got "${day}"`);
  return ms;
}

/** The instants `[start, end)` covering the inclusive UTC days `from`..`to`, as ISO strings. */
export function dayRange(from: string, to: string): { start: string; end: string } {
  const start = dayStartMs(from, 'from');
  const end = dayStartMs(to, 'to') + DAY_MS;
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}
