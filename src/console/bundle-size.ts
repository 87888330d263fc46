import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { defaultConsoleDir } from './serve.js';

/** The budget of SPEC 17: everything the console loads, gzipped. */
export const BUNDLE_BUDGET_BYTES = 300 * 1024;

/** The gzipped size of each file of the console's build, and their sum (what a first visit downloads). */
export function bundleSize(dir: string = defaultConsoleDir()): { files: Array<{ name: string; gzipped: number }>; total: number } {
  const names = ['index.html', ...readdirSync(join(dir, 'assets')).map((name) => `assets/${name}`)];
  const files = names.map((name) => ({ name, gzipped: gzipSync(readFileSync(join(dir, name)), { level: 9 }).length }));
  return { files, total: files.reduce((sum, file) => sum + file.gzipped, 0) };
}

// `npm run build` prints the sizes and fails when the budget is exceeded.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { files, total } = bundleSize();
  for (const file of files) console.log(`console ${file.name.padEnd(40)} ${(file.gzipped / 1024).toFixed(1)} KB gzipped`);
  console.log(`console bundle: ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUNDLE_BUDGET_BYTES / 1024} KB)`);
  if (total > BUNDLE_BUDGET_BYTES) process.exitCode = 1;
}
