import { cpuPerRequest, findRow, medianOf, ratiosByRound, redisCallsPerRequest, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--alerts`: what budget alerts (SPEC 24) cost a request that crosses no threshold. Two fresh
 * gateway-redis processes, the same but for their thresholds: on with an event sink of the bench's own
 * (BENCH_ALERTS=1), off with none (BENCH_ALERTS=off, bench/load-runs/target.ts); every budget of the bench key and projects is configured and never
 * reached. The bounds: within 5% of req/s, and no more Redis commands a request.
 */
const ALERTS_MAX_COST = 0.05;

const WITH = 'gateway-redis, alerts on';
const WITHOUT = 'gateway-redis, alerts off';

function withVersusWithoutTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  const on = findRow(rows, WITH);
  const off = findRow(rows, WITHOUT);
  if (!on || !off) return `(no ${WITH} or ${WITHOUT} row)`;
  const requests = roundRatio(rows, on, WITHOUT, requestsPerSec);
  const cost = 1 - requests;
  const commandsOn = medianOf(on, redisCallsPerRequest);
  const commandsOff = medianOf(off, redisCallsPerRequest);
  return [
    `| req/s on ÷ off | per round | cost (1 − on ÷ off) | CPU µs/req on − off | Redis commands/req on | off | cost < ${ALERTS_MAX_COST * 100}% and commands unchanged |`,
    '|--:|--:|--:|--:|--:|--:|:-:|',
    `| ${ratio(requests)} | ${ratiosByRound(rows, on, WITHOUT, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
      `${signedMicros(roundDifference(rows, on, WITHOUT, cpuPerRequest))} | ${commandsOn.toFixed(2)} | ${commandsOff.toFixed(2)} | ${cost < ALERTS_MAX_COST && commandsOn <= commandsOff + 0.01 ? '✓' : '✗'} |`,
  ].join('\n');
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureAlertsCost(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const pair = [await startGatewayTarget(stack, 'redis', { name: WITH, alerts: true }), await startGatewayTarget(stack, 'redis', { name: WITHOUT, alerts: false })];
  log(`alerts: ${[proxy, ...pair].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(pair, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds([proxy, ...pair], settings);
  for (const target of pair) await target.process?.stop();
  return [
    `${WITH} and ${WITHOUT}: two fresh gateway-redis processes, the same but for an event sink (every other feature on in both; every budget configured, none reached).`,
    versusProxyTable(rows),
    'On vs off (each ratio taken within a round, then the median over rounds; Redis commands per request, median of rounds):',
    withVersusWithoutTable(rows),
  ].join('\n\n');
}
