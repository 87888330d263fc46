import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** The heading of the console-reads section of bench/RESULTS.md (written by bench/console/console-rows.ts). */
export const CONSOLE_HEADING = '## Console reads';
const SOAK_HEADING = '## Soak runs';
/** The console section's part written by test/browser/console-volume.ts: each page's time in Chromium. */
export const PAGES_HEADING = '### Pages in Chromium';

/** The pages part of a console section, from its heading to the section's end ('' if none). */
function pagesPartOf(section: string): string {
  const start = section.indexOf(`\n${PAGES_HEADING}\n`);
  return start < 0 ? '' : section.slice(start + 1);
}

/** The console-reads section of a results document, from its heading to the next `## ` ('' if none). */
export function consoleSectionOf(document: string): string {
  const start = document.indexOf(`\n${CONSOLE_HEADING}\n`);
  if (start < 0) return '';
  const next = document.indexOf('\n## ', start + CONSOLE_HEADING.length + 2);
  return `${document.slice(start + 1, next < 0 ? undefined : next + 1).trimEnd()}\n`;
}

/**
 * Puts `section` (starting with CONSOLE_HEADING) in place of the document's console section, or
 * before the soak runs (which `npm run soak` appends at the end), or at the end.
 */
export function withConsoleSection(document: string, section: string): string {
  const old = consoleSectionOf(document);
  // The reads' bench and the pages' run are separate runs: each keeps the other's part.
  const kept = pagesPartOf(old);
  if (kept !== '' && pagesPartOf(section) === '') section = `${section.trimEnd()}\n\n${kept}`;
  if (old !== '') return document.replace(old, section);
  const soak = document.indexOf(`\n${SOAK_HEADING}\n`);
  if (soak < 0) return `${document.trimEnd()}\n\n${section}`;
  return `${document.slice(0, soak).trimEnd()}\n\n${section}\n${document.slice(soak + 1)}`;
}

/** Puts `pages` (starting with PAGES_HEADING) at the end of the console section, in place of its old pages part. */
export function withConsolePages(document: string, pages: string): string {
  const old = consoleSectionOf(document);
  const reads = old === '' ? `${CONSOLE_HEADING}\n` : old.slice(0, old.length - pagesPartOf(old).length);
  return withConsoleSection(document, `${reads.trimEnd()}\n\n${pages}`);
}

export function writeConsolePages(path: string, pages: string): void {
  const document = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  writeFileSync(path, withConsolePages(document, pages));
}

export function writeConsoleSection(path: string, section: string): void {
  const document = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  writeFileSync(path, withConsoleSection(document, section));
}
