import { cpuPerRequest, findRow, ratiosByRound, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--model-lists`: what model allow-lists (SPEC 21) cost the hot path. Two fresh gateway-redis
 * processes, the same but for allow-lists on the key and its team (BENCH_MODEL_LISTS=1 in
 * bench/load-runs/target.ts: wildcard patterns, a group, a narrowed default), measured with
 * the bare proxy in interleaved rounds.
 */

/** The bound: allow-lists on every key and team cost less than this fraction of requests/s. */
const LISTS_MAX_COST = 0.03;

const WITH = 'gateway-redis, model lists';
const WITHOUT = 'gateway-redis, no model lists';

function withVersusWithoutTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  const lists = findRow(rows, WITH);
  if (!lists || !findRow(rows, WITHOUT)) return `(no ${WITH} or ${WITHOUT} row)`;
  const requests = roundRatio(rows, lists, WITHOUT, requestsPerSec);
  const cost = 1 - requests;
  return [
    `| req/s with ÷ without | per round | cost (1 − with ÷ without) | CPU µs/req with − without | cost < ${LISTS_MAX_COST * 100}% of req/s |`,
    '|--:|--:|--:|--:|:-:|',
    `| ${ratio(requests)} | ${ratiosByRound(rows, lists, WITHOUT, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
      `${signedMicros(roundDifference(rows, lists, WITHOUT, cpuPerRequest))} | ${cost < LISTS_MAX_COST ? '✓' : '✗'} |`,
  ].join('\n');
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureModelLists(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const pair = [await startGatewayTarget(stack, 'redis', { name: WITH, modelLists: true }), await startGatewayTarget(stack, 'redis', { name: WITHOUT })];
  log(`model lists: ${[proxy, ...pair].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(pair, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds([proxy, ...pair], settings);
  for (const target of pair) await target.process?.stop();
  return [
    `${WITH} and ${WITHOUT}: two fresh gateway-redis processes, the same but for allow-lists on the key and its team (every other feature on in both).`,
    versusProxyTable(rows),
    'With vs without model lists (each ratio taken within a round, then the median over rounds):',
    withVersusWithoutTable(rows),
  ].join('\n\n');
}
