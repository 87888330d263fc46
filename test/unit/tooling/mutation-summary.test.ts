import { describe, expect, it } from 'vitest';
import { foldersOf, renderSummary, scoresByFolder, undetected } from '../../mutation-summary.js';

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
    expect(scoresByFolder(report)).toEqual([
      { folder: 'src/auth', killed: 1, timeout: 1, survived: 1, noCoverage: 1, invalid: 1, score: 50 },
      { folder: 'src/ownership', killed: 1, timeout: 0, survived: 0, noCoverage: 0, invalid: 0, score: 100 },
    ]);
  });

  it('scores a file in a subfolder with its folder of test/mutation-folders.json, named from there', () => {
    const nested = { files: { 'src/metering/ledger.ts': { mutants: [mutant('1', 'Killed', 3)] }, 'src/metering/taps/usage.ts': { mutants: [mutant('2', 'Survived', 9)] } } };
    expect(scoresByFolder(nested)).toEqual([{ folder: 'src/metering', killed: 1, timeout: 0, survived: 1, noCoverage: 0, invalid: 0, score: 50 }]);
    expect(renderSummary(nested, '\n- kept\n', '2026-11-26')).toContain('| `src/metering` | 50.0% | 1 | 0 | 1 | 0 | 0 | ledger.ts, taps/usage.ts |');
    // The ledger queries are a folder of their own inside src/store.
    expect(scoresByFolder({ files: { 'src/store/ledger/ledger-daily.ts': { mutants: [mutant('3', 'Killed', 1)] } } })[0]!.folder).toBe('src/store/ledger');
  });

  it('lists the undetected mutants by file and line, and keeps the hand-written equivalents', () => {
    expect(undetected(report).map((m) => `${m.file}:${m.line} ${m.mutator} ${m.status}`)).toEqual([
      'src/auth/jwt.ts:12 StringLiteral NoCoverage',
      'src/auth/runtime-keys.ts:87 EqualityOperator Survived',
    ]);
    const text = renderSummary(report, '\n## Equivalent mutants\n\n- kept\n', '2026-11-25');
    expect(text).toContain('| `src/auth` | 50.0% | 1 | 1 | 1 | 1 | 1 | jwt.ts, runtime-keys.ts |');
    expect(text).toContain('| `src/ownership` | 100.0% | 1 | 0 | 0 | 0 | 0 | policy.ts |');
    expect(text).toContain('| `src/auth/runtime-keys.ts:87` | EqualityOperator | `now > end` | Survived |');
    expect(text.endsWith('<!-- EQUIVALENTS: kept by hand below this line; the rest of this file is generated -->\n\n## Equivalent mutants\n\n- kept\n')).toBe(true);
  });

  it('keeps the rows of a folder this run did not measure from the previous summary, and replaces those it did', () => {
    const previous = renderSummary(report, '\n## Equivalent mutants\n\n- kept\n', '2026-11-24');
    const later = { files: { 'src/ownership/policy.ts': { mutants: [mutant('7', 'Killed', 25), mutant('8', 'Survived', 30, 'BooleanLiteral', 'false')] } } };
    const text = renderSummary(later, '\n- kept\n', '2026-11-25', foldersOf(previous));
    expect(text).toContain('| `src/auth` | 50.0% | 1 | 1 | 1 | 1 | 1 | jwt.ts, runtime-keys.ts |');
    expect(text).toContain('| `src/ownership` | 50.0% | 1 | 0 | 1 | 0 | 0 | policy.ts |');
    expect(text).toContain('| **all** | **50.0%** |');
    const undetectedRows = text.split('\n').filter((line) => /^\| `src\/[^`]+:\d+`/.test(line));
    expect(undetectedRows).toEqual([
      '| `src/auth/jwt.ts:12` | StringLiteral | `""` | NoCoverage |',
      '| `src/auth/runtime-keys.ts:87` | EqualityOperator | `now > end` | Survived |',
      '| `src/ownership/policy.ts:30` | BooleanLiteral | `false` | Survived |',
    ]);
  });

  it('adds a run over other files of a measured folder to its row, and replaces the row when a file is measured again', () => {
    const previous = renderSummary(report, '\n- kept\n', '2026-11-24');
    const otherFile = { files: { 'src/auth/jwt-claims.ts': { mutants: [mutant('9', 'Killed', 4), mutant('10', 'Killed', 5)] } } };
    const added = renderSummary(otherFile, '\n- kept\n', '2026-11-25', foldersOf(previous));
    expect(added).toContain('| `src/auth` | 66.7% | 3 | 1 | 1 | 1 | 1 | jwt-claims.ts, jwt.ts, runtime-keys.ts |');
    expect(added).toContain('| `src/auth/runtime-keys.ts:87` | EqualityOperator | `now > end` | Survived |');
    const again = { files: { 'src/auth/jwt.ts': { mutants: [mutant('11', 'Killed', 12)] } } };
    expect(renderSummary(again, '\n- kept\n', '2026-11-25', foldersOf(previous))).toContain('| `src/auth` | 100.0% | 1 | 0 | 0 | 0 | 0 | jwt.ts |');
  });
});
