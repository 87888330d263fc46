import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release } from 'node:os';
import { dirname, join } from 'node:path';

/** The 1-minute load average now: other work on the machine skews absolute numbers (the ratios share it). */
export const loadNow = (): number => loadavg()[0] ?? 0;

/** The first line of /proc/stat (the machine's CPU time so far, by kind), or undefined off Linux. */
export function cpuTimesNow(): string | undefined {
  try {
    return readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
  } catch {
    return undefined;
  }
}

/**
 * The share of the machine's CPU time the hypervisor gave to other guests between two readings
 * of cpuTimesNow() (`steal`, the 8th figure; guest time is already counted in user time, so the
 * total is the first eight): on a shared host, when it is high the figures swing with it.
 */
export function stealBetween(before: string, after: string): number {
  const figures = (line: string): number[] => line.trim().split(/\s+/).slice(1, 9).map(Number);
  const start = figures(before);
  const spent = figures(after).map((value, i) => value - start[i]!);
  const total = spent.reduce((sum, value) => sum + value, 0);
  return total > 0 ? spent[7]! / total : 0;
}

/** The steal (stealBetween) from a reading of cpuTimesNow() taken at a run's start until now; undefined off Linux. */
export function stealSince(atStart: string | undefined): number | undefined {
  const now = cpuTimesNow();
  return atStart === undefined || now === undefined ? undefined : stealBetween(atStart, now);
}

/** The machine a run's figures come from, for the head of a results section; `steal`: stealBetween over the run, when known. */
export function describeMachine(loadAtStart: number, steal?: number): string {
  let cores = String(availableParallelism());
  try {
    cores = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // nproc is missing on some systems: Node's own count is the same number.
  }
  return `${cores} cores (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${platform()} ${release()}; 1-minute load average ${loadAtStart.toFixed(2)} when the run started${steal === undefined ? '' : `; ${(steal * 100).toFixed(1)}% of the CPU time taken by the hypervisor for other guests during the run (steal)`}`;
}

/** The repository's root (where package.json is), whether run from bench/ through tsx or from dist/bench/. */
export function repositoryRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
