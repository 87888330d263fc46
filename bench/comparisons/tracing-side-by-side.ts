import { cpuPerRequest, failuresOf, medianOf, p50, p99, requestsPerSec } from '../load-runs/figures.js';
import { runLoad } from '../load-runs/load.js';
import { measureRun, type TargetRounds } from '../load-runs/measure.js';
import { int, micros, ms, signedMicros } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import type { Stack } from '../load-runs/stack.js';
import { log } from '../processes/log.js';
import { mainThreadAreas, threadCpuOf, type ThreadTally } from './tracing-threads.js';
import { OFF, ON, onVersusOffTable, spansDroppedSince, startSink, startTracingPair, tracingCounts } from './tracing-cost.js';

/**
 * `npm run bench:tracing -- --side-by-side`: tracing off and on driven at the same time, each
 * from its own `connections` connections, in `rounds` rounds (each after `settle` seconds of the
 * same, unmeasured). Taking turns, as the saturation rounds do, the two are measured seconds
 * apart, and a host whose speed swings by 20% over tens of seconds (a shared one: single rounds
 * read 0.54× to 1.13× in one run) moves their ratio as much; side by side, both live through the
 * same swings. The two share the host's cores, so each round's req/s on ÷ off is the ratio of
 * the two request threads' CPU per request; the other threads' CPU is on top, taken from what
 * the rest of the host (load generator, upstream, Redis) would have had — which CPU µs/req
 * on ÷ off (each whole process) counts. Neither replaces the saturation rounds (SPEC 10: each
 * target in turn); they say what those rounds' spread hides.
 */
/** The two rows, without the Redis columns: both gateways share one Redis, whose counters cannot be split between them. */
function roundsTable(rows: readonly TargetRounds[]): string {
  return [
    '| target | req/s | p50 ms | p99 ms | CPU µs/req | req/s per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${int(medianOf(row, requestsPerSec))} | ${ms(medianOf(row, p50))} | ${ms(medianOf(row, p99))} | ${micros(medianOf(row, cpuPerRequest))} | ` +
        `${row.rounds.map((s) => int(s.requestsPerSec)).join(' / ')} | ${failuresOf(row)} |`,
    ),
  ].join('\n');
}

/** CPU µs a request by thread over all rounds (read from /proc; Linux only), and on − off. */
function threadsTable([off, on]: readonly [ThreadTally, ThreadTally]): string {
  const per = (t: ThreadTally, micros: number): number => micros / t.requests;
  const line = (name: string, t: ThreadTally): string =>
    `| ${name} | ${micros(per(t, t.mainMicros))} | ${micros(per(t, t.otherMicros))} | ${micros(per(t, t.mainMicros + t.otherMicros))} |`;
  const difference = (pick: (t: ThreadTally) => number): string => signedMicros(per(on, pick(on)) - per(off, pick(off)));
  return [
    '| CPU µs a request, all rounds | main thread | other threads | whole process |',
    '|---|--:|--:|--:|',
    line(OFF, off),
    line(ON, on),
    `| on − off | ${difference((t) => t.mainMicros)} | ${difference((t) => t.otherMicros)} | ${difference((t) => t.mainMicros + t.otherMicros)} |`,
  ].join('\n');
}

export async function measureTracingSideBySide(stack: Stack, settings: Settings): Promise<string> {
  const sink = await startSink();
  const pair = await startTracingPair(stack, sink.url);
  const load = { connections: settings.connections, durationSec: settings.duration };
  log(`tracing side by side: ${pair.map((t) => t.name).join(' and ')}, ${settings.rounds} rounds`);
  await Promise.all(pair.map((target) => runLoad(target.url, { ...load, durationSec: Math.max(settings.warmup, 1) })));
  const counted = await tracingCounts(pair[1]!);
  const rows: TargetRounds[] = pair.map((target) => ({ name: target.name, rounds: [] }));
  const tallies: [ThreadTally, ThreadTally] = [
    { requests: 0, mainMicros: 0, otherMicros: 0 },
    { requests: 0, mainMicros: 0, otherMicros: 0 },
  ];
  for (let round = 0; round < settings.rounds; round++) {
    if (settings.settle > 0) await Promise.all(pair.map((target) => runLoad(target.url, { ...load, durationSec: settings.settle })));
    const before = pair.map(threadCpuOf);
    const samples = await Promise.all(pair.map((target) => measureRun(target, load)));
    const after = pair.map(threadCpuOf);
    samples.forEach((sample, k) => {
      rows[k]!.rounds.push(sample);
      const tally = tallies[k]!;
      tally.requests += sample.requests;
      tally.mainMicros += after[k]!.mainMicros - before[k]!.mainMicros;
      tally.otherMicros += after[k]!.otherMicros - before[k]!.otherMicros;
    });
    log(`round ${round + 1}/${settings.rounds}: ${samples.map((s, k) => `${pair[k]!.name} ${Math.round(s.requestsPerSec)} req/s`).join(', ')}`);
  }
  const dropped = await spansDroppedSince(pair[1]!, counted);
  for (const target of pair) await target.process?.stop();
  sink.close();
  // Profiles are written as the processes exit.
  const areas = mainThreadAreas(stack, tallies);
  return [
    `${OFF} and ${ON}, side by side: two fresh gateway-redis processes driven at the same time, ${settings.connections} connections each, ${settings.rounds} rounds of ${settings.duration} s (${dropped}).`,
    roundsTable(rows),
    'Tracing on vs off (each ratio taken within a round, then the median over rounds):',
    onVersusOffTable(rows),
    threadsTable(tallies),
    ...(areas ? ['Main thread by area (`--cpu-prof`: each profile\'s shares × that thread\'s CPU µs/req above; src/tracing is tracing\'s own code):', areas] : []),
  ].join('\n\n');
}
