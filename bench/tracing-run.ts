/**
 * `npm run bench:tracing`: only the tracing comparison of `npm run bench -- --tracing` (the bare
 * proxy, then gateway-redis with tracing off, on at ratio 1.0 and on at ratio 0.1, in interleaved
 * rounds), for working on tracing's cost without the whole bench. Same flags (--rounds, --duration, --warmup,
 * --cpu-prof); prints the tables, writes nothing. With --rate N, instead: the three gateways at a
 * fixed N requests/s, CPU per request split by thread (bench/comparisons/tracing-threads.ts), and
 * with --cpu-prof as well, each main thread's CPU by area (src/tracing: tracing's own code).
 * With --side-by-side, instead: tracing off and on driven at the same time, so that both live
 * through the same swings of a shared host (bench/comparisons/tracing-side-by-side.ts).
 */
import { killChildrenOnExit, runMain, stopAll } from './processes/children.js';
import { measureTracingCost } from './comparisons/tracing-cost.js';
import { measureTracingSideBySide } from './comparisons/tracing-side-by-side.js';
import { measureTracingThreads } from './comparisons/tracing-threads.js';
import { readSettings } from './load-runs/settings.js';
import { cpuTimesNow, stealSince } from './processes/machine.js';
import { startProxyTarget, startStack } from './load-runs/stack.js';
import { warmUp } from './load-runs/measure.js';

/** What the hypervisor took from this machine over the run: when it is high, the figures swing with it. */
function stealLine(atStart: string | undefined): string {
  const steal = stealSince(atStart);
  return steal === undefined ? '' : `\nSteal over this run: ${(steal * 100).toFixed(1)}% of the machine's CPU time went to other guests.\n`;
}

async function main(): Promise<void> {
  killChildrenOnExit();
  const cpuTimesAtStart = cpuTimesNow();
  const settings = readSettings();
  const stack = await startStack(settings.cpuProf);
  if (settings.rate > 0 || settings.sideBySide) {
    const table = settings.rate > 0 ? await measureTracingThreads(stack, settings, settings.rate) : await measureTracingSideBySide(stack, settings);
    process.stdout.write(table + '\n' + stealLine(cpuTimesAtStart));
    stack.redisProbe.close();
    await stopAll();
    return;
  }
  const proxy = await startProxyTarget(stack);
  await warmUp([proxy], { connections: settings.connections, durationSec: settings.warmup });
  process.stdout.write(await measureTracingCost(stack, proxy, settings) + '\n' + stealLine(cpuTimesAtStart));
  stack.redisProbe.close();
  await stopAll();
}
runMain('bench:tracing', main);
