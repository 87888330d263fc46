import type { BaselineTargets } from './baseline-target.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { pairTable, versusProxyTable, type Pairing } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--baseline <dir>`: this gateway beside another checkout's (baseline-target.ts) on the
 * non-streaming chat, proxy, gateway-* and baseline-* measured in the same interleaved rounds.
 * The gateway-* targets are the main run's, already warm; the baseline ones are warmed first.
 */

export const STORE_PAIRINGS: readonly Pairing[] = [
  { label: 'memory', row: 'gateway-memory', base: 'baseline-memory' },
  { label: 'redis', row: 'gateway-redis', base: 'baseline-redis' },
];

/** Rows of this gateway configured like the baseline's target: what the same work costs now. */
const LIKE_FOR_LIKE = { memory: 'gateway-memory, baseline features', redis: 'gateway-redis, baseline features' } as const;

const LIKE_FOR_LIKE_PAIRINGS: readonly Pairing[] = [
  { label: 'memory, same features', row: LIKE_FOR_LIKE.memory, base: 'baseline-memory' },
  { label: 'redis, same features', row: LIKE_FOR_LIKE.redis, base: 'baseline-redis' },
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

/**
 * `mainTargets`: the main run's proxy, gateway-memory and gateway-redis. Two more rows run this
 * gateway with only the baseline target's features (BENCH_FEATURES=baseline), so the pairing
 * shows what the same work costs now, apart from what the new features cost.
 */
export async function measureBaseline(stack: Stack, mainTargets: readonly Target[], baseline: BaselineTargets, settings: Settings): Promise<string> {
  const likeForLike = [
    await startGatewayTarget(stack, 'memory', { name: LIKE_FOR_LIKE.memory, features: 'baseline' }),
    await startGatewayTarget(stack, 'redis', { name: LIKE_FOR_LIKE.redis, features: 'baseline' }),
  ];
  const targets = [...mainTargets, ...likeForLike, ...baseline.targets];
  log(`baseline: ${targets.map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp([...likeForLike, ...baseline.targets], { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds(targets, settings);
  for (const target of likeForLike) await target.process?.stop();
  return [
    baselineCaption(baseline),
    `${LIKE_FOR_LIKE.memory} and ${LIKE_FOR_LIKE.redis}: this gateway with only what the baseline's target configures (no ledger, no ownership, no prices or cost budgets, log level silent).`,
    versusProxyTable(rows),
    'Gateway vs baseline, per store (each ratio taken within a round, then the median over rounds):',
    pairTable(rows, [...STORE_PAIRINGS, ...LIKE_FOR_LIKE_PAIRINGS], { label: 'store', row: 'gateway', base: 'baseline' }),
  ].join('\n\n');
}
