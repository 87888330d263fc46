import { describe, expect, it } from 'vitest';
import { measuredFilesOf, measuredFilesOfSummary, renderSummary, scoresByFolder } from '../../mutation-summary.js';

const mutant = (id: string, status: string, line: number, mutatorName = 'EqualityOperator', replacement = 'now > end') => ({
  id,
  status,
  mutatorName,
  replacement,
  location: { start: { line, column: 1 } },
});

const report = {
  files: {
    'src/auth/runtime-keys.ts': { mutants: [mutant('1', 'Killed', 3), mutant('2', 'Survived', 87), mutant('3', 'Timeout', 9), mutant('4', 'CompileError', 9)] },
    'src/auth/jwt.ts': { mutants: [mutant('5', 'NoCoverage', 12, 'StringLiteral', '""')] },
    'src/ownership/policy.ts': { mutants: [mutant('6', 'Killed', 25)] },
  },
};

describe('the mutation summary', () => {
  it('scores each folder as Stryker does: detected over detected plus undetected, errors left out', () => {
    expect(scoresByFolder(measuredFilesOf(report))).toEqual([
      { folder: 'src/auth', detected: 2, undetected: 2, score: 50, files: ['jwt.ts', 'runtime-keys.ts'] },
      { folder: 'src/ownership', detected: 1, undetected: 0, score: 100, files: ['policy.ts'] },
    ]);
  });

  it('scores a file in a subfolder with its folder of test/mutation-folders.json, named from there', () => {
    const nested = { files: { 'src/metering/ledger.ts': { mutants: [mutant('1', 'Killed', 3)] }, 'src/metering/taps/usage.ts': { mutants: [mutant('2', 'Survived', 9)] } } };
    expect(scoresByFolder(measuredFilesOf(nested))).toEqual([{ folder: 'src/metering', detected: 1, undetected: 1, score: 50, files: ['ledger.ts', 'taps/usage.ts'] }]);
    expect(renderSummary(nested, '\n- kept\n', '2026-11-26')).toContain('| `src/metering` | 50.0% | 1 | 1 | ledger.ts, taps/usage.ts |');
    // The ledger queries are a folder of their own inside src/store.
    expect(scoresByFolder(measuredFilesOf({ files: { 'src/store/ledger/ledger-daily.ts': { mutants: [mutant('3', 'Killed', 1)] } } }))[0]!.folder).toBe('src/store/ledger');
  });

  it('lists each file\'s counts and undetected mutants by file and line, and keeps the hand-written equivalents', () => {
    const text = renderSummary(report, '\n## Equivalent mutants\n\n- kept\n', '2026-11-25');
    expect(text).toContain('| `src/auth` | 50.0% | 2 | 2 | jwt.ts, runtime-keys.ts |');
    expect(text).toContain('| `src/ownership` | 100.0% | 1 | 0 | policy.ts |');
    expect(text).toContain('| **all** | **60.0%** | 3 | 2 | |');
    expect(text).toContain('| `src/auth/runtime-keys.ts` | 66.7% | 2 | 1 |');
    expect(text).toContain('| `src/auth/jwt.ts` | 0.0% | 0 | 1 |');
    expect(undetectedRowsOf(text)).toEqual(['| `src/auth/jwt.ts:12` | StringLiteral | `""` | NoCoverage |', '| `src/auth/runtime-keys.ts:87` | EqualityOperator | `now > end` | Survived |']);
    expect(text.endsWith('<!-- EQUIVALENTS: kept by hand below this line; the rest of this file is generated -->\n\n## Equivalent mutants\n\n- kept\n')).toBe(true);
  });

  it('keeps the rows of files this run did not measure, adds the files it measured, and replaces a file measured again', () => {
    const previous = renderSummary(report, '\n- kept\n', '2026-11-24');
    const otherFile = { files: { 'src/auth/jwt-claims.ts': { mutants: [mutant('9', 'Killed', 4), mutant('10', 'Killed', 5)] } } };
    const added = renderSummary(otherFile, '\n- kept\n', '2026-11-25', measuredFilesOfSummary(previous));
    expect(added).toContain('| `src/auth` | 66.7% | 4 | 2 | jwt-claims.ts, jwt.ts, runtime-keys.ts |');
    expect(added).toContain('| `src/ownership` | 100.0% | 1 | 0 | policy.ts |');
    expect(undetectedRowsOf(added)).toEqual(undetectedRowsOf(previous));

    const again = { files: { 'src/auth/jwt.ts': { mutants: [mutant('11', 'Killed', 12), mutant('12', 'Survived', 30, 'BooleanLiteral', 'false')] } } };
    const replaced = renderSummary(again, '\n- kept\n', '2026-11-26', measuredFilesOfSummary(added));
    expect(replaced).toContain('| `src/auth` | 71.4% | 5 | 2 | jwt-claims.ts, jwt.ts, runtime-keys.ts |');
    expect(replaced).toContain('| `src/auth/jwt.ts` | 50.0% | 1 | 1 |');
    expect(undetectedRowsOf(replaced)).toEqual([
      '| `src/auth/jwt.ts:30` | BooleanLiteral | `false` | Survived |',
      '| `src/auth/runtime-keys.ts:87` | EqualityOperator | `now > end` | Survived |',
    ]);
  });

  it('keeps a row naming several files until a run measures one of them, then drops it whole', () => {
    const earlier = [
      { files: ['src/admin/csv.ts', 'src/admin/scope.ts'], detected: 33, undetected: 1, undetectedRows: ['| `src/admin/scope.ts:9` | BooleanLiteral | `true` | Survived |'] },
      { files: ['src/admin/keys.ts'], detected: 10, undetected: 0, undetectedRows: [] },
    ];
    const kept = renderSummary({ files: { 'src/admin/teams.ts': { mutants: [mutant('1', 'Killed', 3)] } } }, '\n- kept\n', '2026-11-26', earlier);
    expect(kept).toContain('| `src/admin/csv.ts`, `src/admin/scope.ts` | 97.1% | 33 | 1 |');
    expect(kept).toContain('| `src/admin` | 97.8% | 44 | 1 | csv.ts, keys.ts, scope.ts, teams.ts |');
    expect(measuredFilesOfSummary(kept)).toEqual([...earlier, { files: ['src/admin/teams.ts'], detected: 1, undetected: 0, undetectedRows: [] }]);

    const scopeAgain = renderSummary({ files: { 'src/admin/scope.ts': { mutants: [mutant('2', 'Killed', 9)] } } }, '\n- kept\n', '2026-11-26', measuredFilesOfSummary(kept));
    expect(scopeAgain).toContain('| `src/admin` | 100.0% | 12 | 0 | keys.ts, scope.ts, teams.ts |');
    expect(undetectedRowsOf(scopeAgain)).toEqual([]);
  });
});

function undetectedRowsOf(text: string): string[] {
  return text.split('\n').filter((line) => /^\| `src\/[^`]+:\d+`/.test(line));
}
