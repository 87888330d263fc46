import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * What `npm run bench` was asked to do, as flags or environment (flags win):
 *   --duration/BENCH_DURATION seconds per run (5), --connections/BENCH_CONNECTIONS (32),
 *   --rounds/BENCH_ROUNDS (3), --warmup/BENCH_WARMUP seconds (2), --settle/BENCH_SETTLE seconds of
 *   unmeasured load on a target just before each of its measured runs (2), --streams/BENCH_STREAMS
 *   streaming requests per target (200), --write/BENCH_WRITE (1: write bench/RESULTS.md;
 *   default only for a run with default settings and no extra measurement),
 *   --cpu-prof/BENCH_CPU_PROF=1 (V8 CPU profiles of the gateway processes, summarised at the end).
 * Extra measurements, off by default (each adds a minute or more):
 *   --soak-rss/BENCH_SOAK_RSS=1 gateway RSS after 20,000 and 200,000 requests (fresh processes),
 *   --connections-sweep/BENCH_CONNECTIONS_SWEEP=1 CPU per request at 1, 32 and 256 connections,
 *   --cluster/BENCH_CLUSTER=1 one gateway process per core vs one process, both stores (without it,
 *     every run measures gateway-redis with 2 workers vs 1 process);
 *   --workers/BENCH_CLUSTER_WORKERS processes per clustered gateway (available cores, at least 2).
 * Comparisons, off by default, each measured in its own interleaved rounds and printed as its own table:
 *   --baseline <dir>/BENCH_BASELINE=<dir> the gateway of another checkout of this repository
 *     (its own bench target) as baseline-memory and baseline-redis, beside gateway-*,
 *   --ledger-cost/BENCH_LEDGER_COST=1 gateway-redis with the usage ledger on and off,
 *   --events/BENCH_EVENTS=1 clients polling a training job's events instead of chatting,
 *   --tracing/BENCH_TRACING=1 gateway-redis with tracing off and on (ratio 1.0, every span exported),
 *   --model-lists/BENCH_MODEL_LISTS=1 gateway-redis with model allow-lists on its key and team and without (SPEC 21),
 *   --model-routing/BENCH_MODEL_ROUTING=1 gateway-redis with three model routes and an alias table (no alias used; an alias on
 *     every request) and without (SPEC 22).
 *   --alerts/BENCH_ALERTS=1 gateway-redis with budget alerts on (an event sink; budgets never crossed) and off (SPEC 24).
 *   --export/BENCH_EXPORT=1 gateway-redis with the usage export (CloudEvents to a sink on loopback) on and off (SPEC 24).
 * --rate/BENCH_RATE N (0: off): `npm run bench:tracing` and `--export` measure at a fixed N requests/s, CPU per thread,
 *   instead of req/s at saturation;
 *   --side-by-side/BENCH_SIDE_BY_SIDE=1 drives tracing off and on at the same time instead of in turns.
 */

const DEFAULTS = { duration: 5, connections: 32, rounds: 3, warmup: 2, settle: 2, streams: 200 } as const;
type Numeric = keyof typeof DEFAULTS;

export interface Settings extends Record<Numeric, number> {
  readonly write: boolean;
  readonly cpuProf: boolean;
  readonly soakRss: boolean;
  readonly connectionsSweep: boolean;
  readonly cluster: boolean;
  readonly workers: number;
  /** Another checkout's directory (`--baseline`), or undefined. */
  readonly baseline: string | undefined;
  readonly ledgerCost: boolean;
  readonly events: boolean;
  readonly tracing: boolean;
  /** `--model-lists`: allow-lists on every key and team vs none (bench/comparisons/model-lists.ts). */
  readonly modelLists: boolean;
  /** `--model-routing`: routes and aliases vs none, and an alias on every request (bench/comparisons/model-routing.ts). */
  readonly modelRouting: boolean;
  /** `--alerts`: budget alerts on vs off (bench/comparisons/alerts-cost.ts). */
  readonly alerts: boolean;
  /** `--export`: the usage export to a loopback sink on vs off (bench/comparisons/export-cost.ts). */
  readonly export: boolean;
  /** A fixed load in requests/s for `bench:tracing`'s per-thread CPU comparison; 0 when not asked for. */
  readonly rate: number;
  /** `bench:tracing`: tracing off and on driven at the same time (bench/comparisons/tracing-side-by-side.ts). */
  readonly sideBySide: boolean;
}

const FLAGS = {
  duration: { type: 'string' },
  connections: { type: 'string' },
  rounds: { type: 'string' },
  warmup: { type: 'string' },
  settle: { type: 'string' },
  streams: { type: 'string' },
  write: { type: 'string' },
  workers: { type: 'string' },
  'cpu-prof': { type: 'boolean' },
  'soak-rss': { type: 'boolean' },
  'connections-sweep': { type: 'boolean' },
  cluster: { type: 'boolean' },
  baseline: { type: 'string' },
  'ledger-cost': { type: 'boolean' },
  events: { type: 'boolean' },
  tracing: { type: 'boolean' },
  'model-lists': { type: 'boolean' },
  'model-routing': { type: 'boolean' },
  alerts: { type: 'boolean' },
  export: { type: 'boolean' },
  rate: { type: 'string' },
  'side-by-side': { type: 'boolean' },
} as const;

function positive(name: string, raw: string | undefined, fallback: number, minimum = 1): number {
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < minimum) throw new Error(`bench: ${name} must be a number ≥ ${minimum}, got "${raw ?? ''}"`);
  return value;
}

export function readSettings(argv: readonly string[] = process.argv.slice(2)): Settings {
  const { values } = parseArgs({ args: [...argv], options: FLAGS });
  const numbers = {} as Record<Numeric, number>;
  for (const name of Object.keys(DEFAULTS) as Numeric[]) {
    numbers[name] = positive(name, values[name] ?? process.env[`BENCH_${name.toUpperCase()}`], DEFAULTS[name], name === 'warmup' || name === 'settle' ? 0 : 1);
  }
  const flag = (name: 'cpu-prof' | 'soak-rss' | 'connections-sweep' | 'cluster' | 'ledger-cost' | 'events' | 'tracing' | 'model-lists' | 'model-routing' | 'alerts' | 'export' | 'side-by-side'): boolean =>
    values[name] === true || process.env[`BENCH_${name.replaceAll('-', '_').toUpperCase()}`] === '1';
  const workers = Math.round(positive('workers', values.workers ?? process.env.BENCH_CLUSTER_WORKERS, Math.max(2, availableParallelism()), 2));
  const extras = {
    cpuProf: flag('cpu-prof'),
    soakRss: flag('soak-rss'),
    connectionsSweep: flag('connections-sweep'),
    cluster: flag('cluster'),
    ledgerCost: flag('ledger-cost'),
    events: flag('events'),
    tracing: flag('tracing'),
    modelLists: flag('model-lists'),
    modelRouting: flag('model-routing'),
    alerts: flag('alerts'),
    export: flag('export'),
    sideBySide: flag('side-by-side'),
  };
  const rate = positive('rate', values.rate ?? process.env.BENCH_RATE, 0, 0);
  const baselineDir = values.baseline ?? process.env.BENCH_BASELINE;
  const baseline = baselineDir === undefined || baselineDir === '' ? undefined : resolve(baselineDir);
  const isDefault = (Object.keys(DEFAULTS) as Numeric[]).every((name) => numbers[name] === DEFAULTS[name]) && !Object.values(extras).some(Boolean) && !baseline && rate === 0;
  const write = values.write ?? process.env.BENCH_WRITE;
  return { ...numbers, ...extras, workers, baseline, rate, write: write === undefined || write === '' ? isDefault : write === '1' };
}
