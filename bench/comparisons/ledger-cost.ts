import { cpuPerRequest, findRow, ratiosByRound, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--ledger-cost`: what writing the usage ledger costs the hot path. Two fresh gateway-redis
 * processes, identical but for `metering.ledger.enabled` (BENCH_LEDGER=0 in bench/load-runs/target.ts),
 * are measured with the bare proxy in interleaved rounds; both start empty and are warmed alike,
 * so neither carries the main run's history.
 */

/** The bound: the ledger may cost the hot path less than this fraction of requests/s. */
const LEDGER_MAX_COST = 0.05;

const ON = 'gateway-redis';
const OFF = 'gateway-redis, ledger off';

function onVersusOffTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  const on = findRow(rows, ON);
  if (!on || !findRow(rows, OFF)) return `(no ${ON} or ${OFF} row)`;
  const requests = roundRatio(rows, on, OFF, requestsPerSec);
  const cpuDifference = roundDifference(rows, on, OFF, cpuPerRequest);
  const cost = 1 - requests;
  const lines = [
    `| req/s on ÷ off | req/s on ÷ off per round | ledger cost (1 − on ÷ off) | CPU µs/req on − off | CPU µs/req on ÷ off | cost < ${LEDGER_MAX_COST * 100}% of req/s |`,
    '|--:|--:|--:|--:|--:|:-:|',
    `| ${ratio(requests)} | ${ratiosByRound(rows, on, OFF, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
      `${signedMicros(cpuDifference)} | ${ratio(roundRatio(rows, on, OFF, cpuPerRequest))} | ${cost < LEDGER_MAX_COST ? '✓' : '✗'} |`,
  ];
  return lines.join('\n');
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureLedgerCost(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const pair = [await startGatewayTarget(stack, 'redis'), await startGatewayTarget(stack, 'redis', { name: OFF, ledger: false })];
  log(`ledger cost: ${[proxy, ...pair].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(pair, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds([proxy, ...pair], settings);
  for (const target of pair) await target.process?.stop();
  return [
    `${ON} and ${OFF}: two fresh gateway-redis processes, the same but for \`metering.ledger.enabled\` (every other feature on in both).`,
    versusProxyTable(rows),
    'Ledger on vs off (each ratio taken within a round, then the median over rounds):',
    onVersusOffTable(rows),
  ].join('\n\n');
}
