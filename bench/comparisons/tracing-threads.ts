import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { log } from '../processes/log.js';
import { areasTable, type AreaProfile } from '../load-runs/profile-areas.js';
import { profileFileOwner, type CpuProfile } from '../load-runs/profile-summary.js';
import { threadCpu, type ThreadCpu } from '../processes/thread-cpu.js';
import { runLoad } from '../load-runs/load.js';
import { int, micros, signedMicros } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import type { Stack } from '../load-runs/stack.js';
import type { Target } from '../load-runs/measure.js';
import { OFF, ON, ON_TENTH, startSink, startTracingTrio } from './tracing-cost.js';

/**
 * `npm run bench:tracing -- --rate N`: what tracing costs in CPU (off, ratio 1.0, ratio 0.1), at a fixed load below
 * saturation, split by thread. At saturation on 2 shared cores requests/s moves ±20% from round
 * to round and tells designs 10 points apart only over many runs; CPU time per request at a
 * fixed rate is steadier, and split by thread it says what a request pays on the thread that
 * answers it (the main thread) and what runs beside it (V8's GC helpers, libuv's pool),
 * which a machine with a core to spare absorbs. Linux only (/proc).
 */

/** A gateway process's CPU over the runs measured, by thread kind, and the requests it answered then. */
export interface ThreadTally {
  requests: number;
  mainMicros: number;
  otherMicros: number;
}

interface Tally extends ThreadTally {
  failures: number;
  seconds: number;
  /** Whole-process CPU µs/req of each round. */
  readonly perRound: number[];
}

const emptyTally = (): Tally => ({ requests: 0, failures: 0, seconds: 0, mainMicros: 0, otherMicros: 0, perRound: [] });

/** A target's gateway process's CPU so far, by thread kind. */
export function threadCpuOf(target: Target): ThreadCpu {
  const pid = target.process?.child.pid;
  if (pid === undefined) throw new Error(`${target.name}: no process to read CPU from`);
  return threadCpu(pid);
}

async function measureAtRate(target: Target, tally: Tally, rate: number, settings: Settings): Promise<void> {
  // Settled first, as the saturation rounds are (measureRounds): a gateway that idled through the other's run is slow for its first seconds.
  if (settings.settle > 0) await runLoad(target.url, { connections: settings.connections, durationSec: settings.settle, rate });
  const before = threadCpuOf(target);
  const sample = await runLoad(target.url, { connections: settings.connections, durationSec: settings.duration, rate });
  const after = threadCpuOf(target);
  const main = after.mainMicros - before.mainMicros;
  const other = after.otherMicros - before.otherMicros;
  tally.requests += sample.requests;
  tally.failures += sample.failures;
  tally.seconds += settings.duration;
  tally.mainMicros += main;
  tally.otherMicros += other;
  tally.perRound.push((main + other) / sample.requests);
  log(`${target.name} at ${rate} req/s: ${sample.requests} requests, CPU ${((main + other) / sample.requests).toFixed(1)} µs/req (main ${(main / sample.requests).toFixed(1)})`);
}

const row = (name: string, t: Tally): string => {
  const per = (value: number): string => micros(value / t.requests);
  return `| ${name} | ${int(t.requests / t.seconds)} | ${per(t.mainMicros)} | ${per(t.otherMicros)} | ${per(t.mainMicros + t.otherMicros)} | ${t.perRound.map((v) => v.toFixed(0)).join(' / ')} | ${t.failures} |`;
};

/**
 * `targets` (the first the reference) at a fixed `rate`, in rotating rounds: each process's CPU
 * per request by thread, and each other target's difference from the first. Stops the targets.
 */
export async function threadsAtRate(targets: readonly Target[], settings: Settings, rate: number): Promise<{ table: string; tallies: Tally[] }> {
  for (const target of targets) await runLoad(target.url, { connections: settings.connections, durationSec: Math.max(settings.warmup, 1), rate });
  const tallies = targets.map(emptyTally);
  for (let round = 0; round < settings.rounds; round++) {
    // Rotate which goes first, as the saturation rounds do.
    for (let i = 0; i < targets.length; i++) {
      const k = (round + i) % targets.length;
      await measureAtRate(targets[k]!, tallies[k]!, rate, settings);
    }
  }
  for (const target of targets) await target.process?.stop();
  const [reference] = tallies as [Tally];
  const difference = (other: Tally, pick: (t: Tally) => number): string => signedMicros(pick(other) / other.requests - pick(reference) / reference.requests);
  const differenceRow = (name: string, other: Tally): string =>
    `| ${name} − ${targets[0]!.name} | | ${difference(other, (t) => t.mainMicros)} | ${difference(other, (t) => t.otherMicros)} | ${difference(other, (t) => t.mainMicros + t.otherMicros)} | | |`;
  const table = [
    '| target | req/s | main thread | other threads | whole process | whole process per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...targets.map((target, i) => row(target.name, tallies[i]!)),
    ...targets.slice(1).map((target, i) => differenceRow(target.name, tallies[i + 1]!)),
  ].join('\n');
  return { table, tallies };
}

export async function measureTracingThreads(stack: Stack, settings: Settings, rate: number): Promise<string> {
  const sink = await startSink();
  const targets = await startTracingTrio(stack, sink.url);
  log(`tracing threads: ${targets.map((t) => t.name).join(', ')} at ${rate} req/s, ${settings.rounds} rounds`);
  const { table, tallies } = await threadsAtRate(targets, settings, rate);
  sink.close();
  const [off, on] = tallies as [Tally, Tally];
  const areas = mainThreadAreas(stack, [off, on]);
  return [
    `${OFF}, ${ON} and ${ON_TENTH} at a fixed ${rate} req/s (${settings.connections} connections, ${settings.rounds} rounds of ${settings.duration} s, rotating): CPU µs per request of each gateway process, read per thread from /proc.`,
    table,
    ...(areas ? ['', 'Main thread by area (`--cpu-prof`: each profile\'s shares × that thread\'s CPU µs/req above; src/tracing is tracing\'s own code, the rest what it costs elsewhere and noise):', areas] : []),
  ].join('\n');
}

/**
 * With `--cpu-prof`, the two gateways' main-thread profiles by area (written when they exit):
 * the one figure of tracing's own code at work in the gateway, steadier than the on − off
 * difference, which carries every other area's noise.
 */
export function mainThreadAreas(stack: Stack, [off, on]: readonly [ThreadTally, ThreadTally]): string | undefined {
  if (!stack.profileDir) return undefined;
  const profiles: AreaProfile[] = [];
  for (const [name, tally] of [[OFF, off], [ON, on]] as const) {
    const file = readdirSync(stack.profileDir).find((f) => {
      const { pid, thread } = profileFileOwner(f);
      return thread === '0' && stack.processNames.get(pid) === name;
    });
    if (file === undefined) return undefined;
    const profile = JSON.parse(readFileSync(join(stack.profileDir, file), 'utf8')) as CpuProfile;
    profiles.push({ name, profile, cpuMicrosPerRequest: tally.mainMicros / tally.requests });
  }
  return areasTable(profiles);
}
