import { describe, expect, it } from 'vitest';
import { consoleSectionOf, withConsolePages, withConsoleSection } from '../console/results-section.js';

const MAIN = '# Benchmark results\n\n## Non-streaming chat\n\n| a |\n';
const SOAK = '## Soak runs\n\nAppended by npm run soak.\n\n### run 1\n';

/** bench/RESULTS.md keeps the console reads through `npm run bench` rewrites and `npm run soak` appends. */
describe('the console-reads section of bench/RESULTS.md', () => {
  it('goes before the soak runs, and replaces itself on the next run', () => {
    const first = withConsoleSection(`${MAIN}\n${SOAK}`, '## Console reads\n\nrun A\n');
    expect(first).toBe(`${MAIN}\n## Console reads\n\nrun A\n\n${SOAK}`);
    expect(consoleSectionOf(first)).toBe('## Console reads\n\nrun A\n');
    const second = withConsoleSection(first, '## Console reads\n\nrun B\n');
    expect(second).toBe(`${MAIN}\n## Console reads\n\nrun B\n\n${SOAK}`);
  });

  it('goes at the end without soak runs, and is absent from a document without it', () => {
    expect(withConsoleSection(MAIN, '## Console reads\n\nrun A\n')).toBe(`${MAIN}\n## Console reads\n\nrun A\n`);
    expect(consoleSectionOf(`${MAIN}\n${SOAK}`)).toBe('');
  });

  it('keeps the pages part (console-volume.ts) through a new reads run, and the reads through a new pages run', () => {
    const reads = withConsoleSection(`${MAIN}\n${SOAK}`, '## Console reads\n\nrun A\n');
    const pages = withConsolePages(reads, '### Pages in Chromium\n\npages 1\n');
    expect(pages).toBe(`${MAIN}\n## Console reads\n\nrun A\n\n### Pages in Chromium\n\npages 1\n\n${SOAK}`);
    expect(withConsoleSection(pages, '## Console reads\n\nrun B\n')).toBe(`${MAIN}\n## Console reads\n\nrun B\n\n### Pages in Chromium\n\npages 1\n\n${SOAK}`);
    expect(withConsolePages(pages, '### Pages in Chromium\n\npages 2\n')).toBe(`${MAIN}\n## Console reads\n\nrun A\n\n### Pages in Chromium\n\npages 2\n\n${SOAK}`);
    expect(withConsolePages(MAIN, '### Pages in Chromium\n\npages 1\n')).toBe(`${MAIN}\n## Console reads\n\n### Pages in Chromium\n\npages 1\n`);
  });
});
