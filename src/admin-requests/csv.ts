/**
 * CSV as the admin API writes it (RFC 4180, CRLF lines), safe to open in a spreadsheet: a text
 * cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return would be read as a
 * formula, so it is prefixed with `'` (OWASP, "CSV Injection"). Numbers the gateway computed
 * itself (counts, costs) are written as numbers: never negative, and a quote would turn them
 * into text that no longer sums.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A cell of text that came from data (a model name, a key id): defused, then quoted if need be. */
function textCell(value: string): string {
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A cell: a number (or `CsvNumber`) as it is, anything else as text. */
export type CsvCell = string | number | CsvNumber;

/** A number the gateway formatted itself (a cost as a plain decimal, never `6e-7`): written as a number. */
export class CsvNumber {
  constructor(readonly text: string) {}
}

function cell(value: CsvCell): string {
  if (typeof value === 'number') return String(value);
  if (value instanceof CsvNumber) return value.text;
  return textCell(value);
}

/** A header line, then one line per row, each cell in `columns` order (missing: empty). */
export function toCsv(columns: readonly string[], rows: ReadonlyArray<Readonly<Record<string, CsvCell>>>): string {
  const lines = [columns.map(textCell).join(',')];
  for (const row of rows) lines.push(columns.map((column) => cell(row[column] ?? '')).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
