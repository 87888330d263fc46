import { describe, expect, it } from 'vitest';
import { CsvNumber, toCsv } from '../../../src/admin-requests/index.js';

// /admin/usage as CSV is opened in spreadsheets: a model name a client chose must never run as a
// formula, and the numbers must stay numbers that sum.
describe('toCsv', () => {
  it('writes a header and one CRLF line per row, cells in column order, missing cells empty', () => {
    expect(toCsv(['team', 'model', 'requests'], [{ model: 'gpt', team: 't1', requests: 3 }, { team: 't2' }])).toBe('team,model,requests\r\nt1,gpt,3\r\nt2,,\r\n');
  });

  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx'])('prefixes a text cell starting like a formula (%j) with a quote', (value) => {
    const written = toCsv(['m'], [{ m: value }]).split('\r\n')[1];
    expect(written).toBe(/[\r]/.test(value) ? `"'${value}"` : `'${value}`);
  });

  it('leaves a formula character inside a cell alone', () => {
    expect(toCsv(['m'], [{ m: 'a=b-c' }])).toBe('m\r\na=b-c\r\n');
  });

  it('quotes cells with a comma, quote, CR or LF, doubling quotes', () => {
    expect(toCsv(['m'], [{ m: 'a,b' }, { m: 'say "hi"' }, { m: 'x\ny' }, { m: 'x\ry' }])).toBe('m\r\n"a,b"\r\n"say ""hi"""\r\n"x\ny"\r\n"x\ry"\r\n');
  });

  it('writes numbers and CsvNumbers as they are, even negative ones, but defuses the same text', () => {
    expect(toCsv(['n', 'c', 't'], [{ n: -2, c: new CsvNumber('0.0000006'), t: '-2' }])).toBe('n,c,t\r\n-2,0.0000006,\'-2\r\n');
  });

  it('defuses header cells too', () => {
    expect(toCsv(['=x'], [])).toBe("'=x\r\n");
  });
});
