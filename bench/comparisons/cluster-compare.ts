import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target, type TargetRounds } from '../load-runs/measure.js';
import { int, micros, ms, ratio } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack, type Store } from '../load-runs/stack.js';
import { cpuPerRequest, failuresOf, medianOf, p50, p99, redisCpuPerRequest, requestsPerSec, roundRatio } from '../load-runs/figures.js';

/**
 * `--cluster`: what one gateway process per core gives on this machine. For each store, the
 * single-process gateway of the main run and a cluster of `workers` processes sharing its
 * port are measured in interleaved rounds. The load generator and the upstream share the
 * same cores, so on a small machine the extra processes compete with them.
 * With the memory store every worker keeps its own limits (a real deployment would not).
 */

function clusterTable(rows: readonly TargetRounds[], singleOf: ReadonlyMap<string, string>, workers: number): string {
  const lines = [
    '| target | processes | req/s | p50 ms | p99 ms | req/s vs 1 process | p99 vs 1 process | CPU µs/req (all processes) | Redis CPU µs/req | req/s per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of rows) {
    const single = singleOf.get(row.name) ?? row.name;
    const failures = failuresOf(row);
    lines.push(
      `| ${row.name} | ${single === row.name ? 1 : `${workers} + primary`} | ${int(medianOf(row, requestsPerSec))} | ${ms(medianOf(row, p50))} | ${ms(medianOf(row, p99))} | ` +
        `${ratio(roundRatio(rows, row, single, requestsPerSec))} | ${ratio(roundRatio(rows, row, single, p99))} | ` +
        `${micros(medianOf(row, cpuPerRequest))} | ${micros(medianOf(row, redisCpuPerRequest))} | ${row.rounds.map((s) => int(s.requestsPerSec)).join(' / ')} | ${failures} |`,
    );
  }
  return lines.join('\n');
}

/** `singles`: the main run's gateway-memory and gateway-redis targets, already warm. */
export async function measureCluster(stack: Stack, singles: readonly Target[], settings: Settings): Promise<string> {
  const targets: Target[] = [];
  const clustered: Target[] = [];
  const singleOf = new Map<string, string>();
  for (const single of singles) {
    const store: Store = single.redis ? 'redis' : 'memory';
    const cluster = await startGatewayTarget(stack, store, { name: `${single.name} ×${settings.workers} workers`, workers: settings.workers });
    singleOf.set(cluster.name, single.name);
    targets.push(single, cluster);
    clustered.push(cluster);
  }
  log(`cluster: ${settings.workers} workers per clustered gateway, ${settings.rounds} rounds`);
  await warmUp(clustered, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds(targets, settings);
  for (const cluster of clustered) await cluster.process?.stop();
  return clusterTable(rows, singleOf, settings.workers);
}
