import { median } from './load.js';
import type { RunSample, TargetRounds } from './measure.js';
import { totalCalls } from '../processes/redis-stats.js';

/**
 * Per-sample figures and how rounds are folded into one number: the median over rounds, and
 * ratios taken within each round first (rows measured seconds apart, not minutes) and then
 * their median. NaN where a row has no such figure (no CPU for direct, no Redis for memory).
 */

export type Pick = (sample: RunSample) => number;

export const requestsPerSec: Pick = (s) => s.requestsPerSec;
export const p50: Pick = (s) => s.p50;
export const p99: Pick = (s) => s.p99;
export const cpuPerRequest: Pick = (s) => (s.cpuMicros === undefined ? Number.NaN : s.cpuMicros / s.requests);
export const redisCallsPerRequest: Pick = (s) => (s.redis ? totalCalls(s.redis) / s.requests : Number.NaN);
export const redisCpuPerRequest: Pick = (s) => (s.redis ? s.redis.cpuMicros / s.requests : Number.NaN);

/** Failed requests over all rounds of a row. */
export const failuresOf = (row: TargetRounds): number => row.rounds.reduce((sum, s) => sum + s.failures, 0);

export function medianOf(row: TargetRounds, pick: Pick): number {
  return median(row.rounds.map(pick));
}

export function findRow(rows: readonly TargetRounds[], name: string): TargetRounds | undefined {
  return rows.find((row) => row.name === name);
}

/** `combine(target, base)` of one figure in each round, in round order; empty without a base row. */
function byRound(rows: readonly TargetRounds[], target: TargetRounds, base: string, pick: Pick, combine: (a: number, b: number) => number): number[] {
  const reference = findRow(rows, base);
  return reference ? target.rounds.map((sample, i) => combine(pick(sample), pick(reference.rounds[i]!))) : [];
}

/** target/base in each round, in round order (the spread behind a roundRatio); empty without a base row. */
export function ratiosByRound(rows: readonly TargetRounds[], target: TargetRounds, base: string, pick: Pick): number[] {
  return byRound(rows, target, base, pick, (a, b) => a / b);
}

/** Median over rounds of target/base, each round's pair measured side by side (NaN without a base row). */
export function roundRatio(rows: readonly TargetRounds[], target: TargetRounds, base: string, pick: Pick): number {
  return median(ratiosByRound(rows, target, base, pick));
}

/** Median over rounds of target − base: for costs per request, where a difference reads better than a ratio. */
export function roundDifference(rows: readonly TargetRounds[], target: TargetRounds, base: string, pick: Pick): number {
  return median(byRound(rows, target, base, pick, (a, b) => a - b));
}

/** Redis calls per command over all rounds of a row, per request: the breakdown table. */
export function redisCallsByCommand(row: TargetRounds): Map<string, { callsPerRequest: number; usecPerCall: number }> {
  const totals = new Map<string, { calls: number; usec: number }>();
  let requests = 0;
  for (const sample of row.rounds) {
    if (!sample.redis) continue;
    requests += sample.requests;
    for (const [name, usage] of sample.redis.commands) {
      const total = totals.get(name) ?? { calls: 0, usec: 0 };
      totals.set(name, { calls: total.calls + usage.calls, usec: total.usec + usage.usec });
    }
  }
  const perRequest = new Map<string, { callsPerRequest: number; usecPerCall: number }>();
  for (const [name, total] of totals) perRequest.set(name, { callsPerRequest: total.calls / requests, usecPerCall: total.usec / total.calls });
  return perRequest;
}
