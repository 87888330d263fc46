import type { BaselineTargets } from './baseline-target.js';
import { log } from './log.js';
import { measureRounds, warmUp, type Target } from './measure.js';
import { pairTable, versusProxyTable, type Pairing } from './report.js';
import type { Settings } from './settings.js';

/**
 * `--baseline <dir>`: this gateway beside another checkout's (bench/baseline-target.ts) on the
 * non-streaming chat, proxy, gateway-* and baseline-* measured in the same interleaved rounds.
 * The gateway-* targets are the main run's, already warm; the baseline ones are warmed first.
 */

export const STORE_PAIRINGS: readonly Pairing[] = [
  { label: 'memory', row: 'gateway-memory', base: 'baseline-memory' },
  { label: 'redis', row: 'gateway-redis', base: 'baseline-redis' },
];

/** What the baseline rows are, for every table that has them. */
export function baselineCaption(baseline: BaselineTargets): string {
  const { dir, revision, missingFeatures } = baseline.checkout;
  const features =
    missingFeatures.length === 0
      ? 'Its bench target configures every feature gateway-* has.'
      : `It has fewer features than gateway-*: its bench target configures no ${missingFeatures.join(', no ')}.`;
  return `baseline-memory and baseline-redis are the gateway of ${dir} (${revision}), started from its own bench/target. ${features} baseline-redis has a redis-server of its own.`;
}

/** `mainTargets`: the main run's proxy, gateway-memory and gateway-redis. */
export async function measureBaseline(mainTargets: readonly Target[], baseline: BaselineTargets, settings: Settings): Promise<string> {
  const targets = [...mainTargets, ...baseline.targets];
  log(`baseline: ${targets.map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(baseline.targets, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds(targets, { connections: settings.connections, durationSec: settings.duration }, settings.rounds);
  return [
    baselineCaption(baseline),
    versusProxyTable(rows),
    'Gateway vs baseline, per store (each ratio taken within a round, then the median over rounds):',
    pairTable(rows, STORE_PAIRINGS, { label: 'store', row: 'gateway', base: 'baseline' }),
  ].join('\n\n');
}
