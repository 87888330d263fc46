// vitest globalSetup: before any test, checks that the machine has the real parts the suite
// drives, so a fresh clone fails with one line naming what to install instead of dozens of
// ENOENTs from deep inside the tests.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Each command the suite runs, and the Debian package that brings it (what .ci/run installs). */
export const REQUIRED = [
  { command: 'redis-server', pkg: 'redis-server' },
  { command: 'promtool', pkg: 'prometheus' },
  { command: 'prometheus', pkg: 'prometheus' },
  { command: 'chromium', pkg: 'chromium' },
  { command: 'pg_isready', pkg: 'postgresql' },
] as const;

/** Where the helpers look for binaries (test/helpers/prometheus.ts findBinary does the same). */
export const searchDirs = (path = process.env.PATH ?? ''): string[] => [...path.split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin'];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The commands of REQUIRED found in none of `dirs` (chromium: or at CHROMIUM_PATH). */
export function missingCommands(dirs: string[], chromiumPath = process.env.CHROMIUM_PATH): (typeof REQUIRED)[number][] {
  return REQUIRED.filter(({ command }) => {
    if (command === 'chromium' && chromiumPath !== undefined && executable(chromiumPath)) return false;
    return !dirs.some((dir) => executable(join(dir, command)));
  });
}

/** The one line a user sees, or null when nothing is missing. */
export function machineProblem(dirs: string[], chromiumPath = process.env.CHROMIUM_PATH): string | null {
  const missing = missingCommands(dirs, chromiumPath);
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((m) => m.pkg))].join(' ');
    return `npm test needs ${missing.map((m) => m.command).join(', ')} (Debian: ${packages}): run "bash .ci/run", which installs them and runs npm test (or apt-get install ${packages})`;
  }
  const pgIsReady = dirs.map((dir) => join(dir, 'pg_isready')).find(executable)!;
  if (spawnSync(pgIsReady, ['-h', '127.0.0.1', '-p', '5432', '-q']).status !== 0) {
    return 'npm test needs PostgreSQL answering on 127.0.0.1:5432 (trust auth, user postgres): run "bash .ci/run", which starts it and runs npm test';
  }
  return null;
}

/** Under `npm test` (the whole suite) a problem stops the run; a single file run by hand
 *  (`npx vitest run a.test.ts`) only hears of it, since it may need none of these. */
export default function checkMachine(): void {
  const problem = machineProblem(searchDirs());
  if (problem === null) return;
  if (process.env.npm_lifecycle_event !== 'test') {
    process.stderr.write(`warning: ${problem}\n`);
    return;
  }
  const error = new Error(problem);
  error.stack = problem; // the line is the whole story: no trace
  throw error;
}
