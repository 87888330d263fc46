import type { RunningChild } from '../processes/children.js';
import { runLoad, type LoadOptions, type LoadSample } from './load.js';
import { log } from '../processes/log.js';
import { queryStats, type ProcessStats } from '../processes/process-stats.js';
import { usageBetween, type RedisProbe, type RedisUsage } from '../processes/redis-stats.js';
import type { Settings } from './settings.js';
import { CHAT_REQUEST, type LoadRequest } from './workload.js';

/** One target under load, with what can be asked about its costs. */
export interface Target {
  readonly name: string;
  readonly url: string;
  /** The target's own process(es), asked for CPU time and memory; none for direct (the upstream). */
  readonly process?: RunningChild;
  /** The redis-server this target uses, read for its counters; only for Redis-store targets. */
  readonly redis?: RedisProbe;
  /** What it is sent: the chat request unless a comparison needs another (its own job id, another checkout's key). */
  readonly request?: LoadRequest;
}

/** One measured run: the load generator's view plus what it cost the target and its Redis. */
export interface RunSample extends LoadSample {
  /** CPU µs (user + system) the target's process(es) used during the run. */
  readonly cpuMicros: number | undefined;
  readonly redis: RedisUsage | undefined;
}

export interface TargetRounds {
  readonly name: string;
  /** One sample per round, in round order (every target has the same number). */
  readonly rounds: RunSample[];
}

/**
 * Counters are read just before and just after the load, with nothing else running against the
 * target in between. Redis is shared by every Redis-store target, but only one runs at a time.
 */
export async function measureRun(target: Target, load: LoadOptions): Promise<RunSample> {
  const readCounters = (): Promise<[ProcessStats | undefined, RedisUsage | undefined]> =>
    Promise.all([target.process ? queryStats(target.process.child) : undefined, target.redis?.read()]);
  const [cpuBefore, redisBefore] = await readCounters();
  const sample = await runLoad(target.url, load, target.request);
  const [cpuAfter, redisAfter] = await readCounters();
  return {
    ...sample,
    cpuMicros: cpuBefore && cpuAfter ? cpuAfter.cpuMicros - cpuBefore.cpuMicros : undefined,
    redis: redisBefore && redisAfter ? usageBetween(redisBefore, redisAfter) : undefined,
  };
}

/**
 * Sends each target its request once, before a comparison spends minutes on it: a target that
 * refuses it (another checkout expecting another key, a job it does not know) stops the run
 * with its answer, instead of filling a table with failures.
 */
export async function checkAccepted(targets: readonly Target[]): Promise<void> {
  for (const target of targets) {
    const sent = target.request ?? CHAT_REQUEST;
    const response = await fetch(target.url + sent.path, { method: sent.method, headers: sent.headers, ...(sent.body === undefined ? {} : { body: sent.body }) });
    const answer = await response.text();
    if (!response.ok) throw new Error(`${target.name} answered ${response.status} to ${sent.method} ${sent.path}: ${answer.slice(0, 300)}`);
  }
}

/** JIT, connection pools and Redis scripts warmed before anything is measured. */
export async function warmUp(targets: readonly Target[], load: LoadOptions): Promise<void> {
  if (load.durationSec <= 0) return;
  for (const target of targets) {
    log(`warm-up ${target.name}`);
    await runLoad(target.url, load, target.request);
  }
}

/** How rounds are run: each run's load, how many rounds, and the unmeasured load that settles a target first. */
export type RoundSettings = Pick<Settings, 'connections' | 'duration' | 'rounds' | 'settle'>;

/**
 * `rounds` rounds over every target, the first target rotated each round. Each measured run is
 * preceded by `settle` seconds of the same load on the same target, unmeasured: a gateway that sat
 * idle while the others ran (one run or four, depending on the round) is slower for its first
 * seconds (V8 shrinks an idle heap and lets cold code go), which made the target after an idle
 * stretch read 10–20% low in some rounds and high in others (bench/HISTORY.md, 2026-11-28: "Rounds").
 */
export async function measureRounds(targets: readonly Target[], settings: RoundSettings): Promise<TargetRounds[]> {
  const load: LoadOptions = { connections: settings.connections, durationSec: settings.duration };
  const rows: TargetRounds[] = targets.map((target) => ({ name: target.name, rounds: [] }));
  for (let round = 0; round < settings.rounds; round++) {
    // Rotating the first target cancels any effect of position within a round.
    for (let k = 0; k < targets.length; k++) {
      const t = (round + k) % targets.length;
      const target = targets[t]!;
      if (settings.settle > 0) await runLoad(target.url, { ...load, durationSec: settings.settle }, target.request);
      const sample = await measureRun(target, load);
      rows[t]!.rounds[round] = sample;
      const cpu = sample.cpuMicros === undefined ? '' : `, CPU ${(sample.cpuMicros / sample.requests).toFixed(1)} µs/req`;
      log(`round ${round + 1}/${settings.rounds} ${target.name}: ${Math.round(sample.requestsPerSec)} req/s, p50 ${sample.p50.toFixed(2)} ms${cpu}, failed ${sample.failures}`);
    }
  }
  return rows;
}
