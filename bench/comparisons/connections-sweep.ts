import { log } from '../processes/log.js';
import { measureRun, type Target } from '../load-runs/measure.js';
import { int, micros, ms } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { cpuPerRequest, redisCpuPerRequest } from '../load-runs/figures.js';

/**
 * `--connections-sweep`: CPU per request as concurrency changes. At 1 connection a process pays
 * every per-request cost alone (no batching of writes or of Redis round trips); at 256 it may
 * amortise them, or lose to queueing and GC pressure. One short run per target and level.
 */

const LEVELS = [1, 32, 256] as const;
const SWEEP_SECONDS = 3;

export async function measureConnectionsSweep(targets: readonly Target[], settings: Settings): Promise<string> {
  const durationSec = Math.min(SWEEP_SECONDS, settings.duration);
  const lines = [
    `| target | connections | req/s | p50 ms | p99 ms | CPU µs/req | Redis CPU µs/req | failed |`,
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const rows = new Map<string, string[]>(targets.map((target) => [target.name, []]));
  for (const connections of LEVELS) {
    for (const target of targets) {
      const sample = await measureRun(target, { connections, durationSec });
      log(`sweep ${target.name} at ${connections} connections: ${Math.round(sample.requestsPerSec)} req/s, CPU ${micros(cpuPerRequest(sample))} µs/req`);
      rows.get(target.name)!.push(
        `| ${target.name} | ${connections} | ${int(sample.requestsPerSec)} | ${ms(sample.p50)} | ${ms(sample.p99)} | ` +
          `${micros(cpuPerRequest(sample))} | ${micros(redisCpuPerRequest(sample))} | ${sample.failures} |`,
      );
    }
  }
  // Measured level by level (so noise hits every target alike), shown target by target.
  for (const targetRows of rows.values()) lines.push(...targetRows);
  return lines.join('\n');
}
