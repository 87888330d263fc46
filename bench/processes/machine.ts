import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release } from 'node:os';
import { dirname, join } from 'node:path';

/** The 1-minute load average now: other work on the machine skews absolute numbers (the ratios share it). */
export const loadNow = (): number => loadavg()[0] ?? 0;

/** The machine a run's figures come from, for the head of a results section. */
export function describeMachine(loadAtStart: number): string {
  let cores = String(availableParallelism());
  try {
    cores = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // nproc is missing on some systems: Node's own count is the same number.
  }
  return `${cores} cores (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${platform()} ${release()}; 1-minute load average ${loadAtStart.toFixed(2)} when the run started`;
}

/** The repository's root (where package.json is), whether run from bench/ through tsx or from dist/bench/. */
export function repositoryRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
