import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSoakRun, SOAK_HEADING, soakSectionOf } from '../soak/soak-report.js';

const BENCH_DOCUMENT = '# Benchmark results\n\n## Non-streaming chat\n\n| target | req/s |\n|---|--:|\n| direct | 40,000 |\n';

describe('soak runs in bench/RESULTS.md', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const resultsFile = (text: string): string => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-soak-results-'));
    const path = join(dir, 'RESULTS.md');
    writeFileSync(path, text);
    return path;
  };

  it('appends each run under one "## Soak runs" heading at the end, after what the bench wrote', () => {
    const path = resultsFile(BENCH_DOCUMENT);
    appendSoakRun(path, '### 2026-11-23T00:00:00Z — PASS\n\nfirst');
    appendSoakRun(path, '### 2026-11-23T01:00:00Z — FAIL\n\nsecond');
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(BENCH_DOCUMENT.trimEnd())).toBe(true);
    expect(text.split(SOAK_HEADING)).toHaveLength(2);
    expect(text.indexOf('first')).toBeLessThan(text.indexOf('second'));
    expect(text.endsWith('second\n')).toBe(true);
  });

  it('hands a bench rewrite the soak runs to keep, from their heading on, and nothing when there are none', () => {
    const path = resultsFile(BENCH_DOCUMENT);
    expect(soakSectionOf(readFileSync(path, 'utf8'))).toBe('');
    appendSoakRun(path, '### run\n\nkept');
    const kept = soakSectionOf(readFileSync(path, 'utf8'));
    expect(kept.startsWith(`\n${SOAK_HEADING}\n`)).toBe(true);
    expect(kept.endsWith('kept\n')).toBe(true);
    // What bench/run.ts writes: its new document, then the soak runs it found.
    const rewritten = '# Benchmark results\n\nnew tables\n' + kept;
    expect(soakSectionOf(rewritten)).toBe(kept);
  });

  it('does not mistake a heading that only starts with the same words for the soak section', () => {
    expect(soakSectionOf('# Benchmark results\n\n## Soak runs of another kind\n')).toBe('');
  });
});
