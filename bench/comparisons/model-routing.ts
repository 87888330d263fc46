import { cpuPerRequest, findRow, ratiosByRound, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--model-routing`: what model routing (SPEC 22) costs the hot path. Three fresh gateway-redis
 * processes, the same but for `models.routes` (three routes, one to a named upstream) and an
 * alias table: without them; with them, the bench's model no alias (one cached lookup per chat);
 * with them and the bench's model an alias (its body's `model` rewritten on every request).
 * Measured with the bare proxy in interleaved rounds (BENCH_MODEL_ROUTING in bench/load-runs/target.ts).
 */

/** The bound: routes and an alias table, no alias used, cost less than this fraction of requests/s. */
const ROUTING_MAX_COST = 0.03;

const WITHOUT = 'gateway-redis, no routing';
const ROUTED = 'gateway-redis, 3 routes + aliases';
const ALIASED = 'gateway-redis, alias on every request';

function versusWithoutTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  if (!findRow(rows, WITHOUT)) return `(no ${WITHOUT} row)`;
  const lines = [`| target | req/s ÷ ${WITHOUT} | per round | cost (1 − ratio) | CPU µs/req − without | bound |`, '|---|--:|--:|--:|--:|:-:|'];
  for (const name of [ROUTED, ALIASED]) {
    const row = findRow(rows, name);
    if (!row) continue;
    const requests = roundRatio(rows, row, WITHOUT, requestsPerSec);
    const cost = 1 - requests;
    const bound = name === ROUTED ? `${cost < ROUTING_MAX_COST ? '✓' : '✗'} < ${ROUTING_MAX_COST * 100}%` : 'quoted';
    lines.push(
      `| ${name} | ${ratio(requests)} | ${ratiosByRound(rows, row, WITHOUT, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
        `${signedMicros(roundDifference(rows, row, WITHOUT, cpuPerRequest))} | ${bound} |`,
    );
  }
  return lines.join('\n');
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureModelRouting(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const trio = [
    await startGatewayTarget(stack, 'redis', { name: WITHOUT }),
    await startGatewayTarget(stack, 'redis', { name: ROUTED, modelRouting: 'routes' }),
    await startGatewayTarget(stack, 'redis', { name: ALIASED, modelRouting: 'alias' }),
  ];
  log(`model routing: ${[proxy, ...trio].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(trio, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds([proxy, ...trio], settings);
  for (const target of trio) await target.process?.stop();
  return [
    `${WITHOUT}, ${ROUTED} and ${ALIASED}: three fresh gateway-redis processes, the same but for the routing tables (every other feature on in all three).`,
    versusProxyTable(rows),
    'Against the gateway without routing (each ratio taken within a round, then the median over rounds):',
    versusWithoutTable(rows),
  ].join('\n\n');
}
