import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modulePath, startChild, startRedis, type RunningChild } from '../processes/children.js';
import type { Target } from './measure.js';
import { RedisProbe } from '../processes/redis-stats.js';

/**
 * The processes every measurement shares (fake upstream, private redis-server) and the
 * targets started on top of them. Targets can be started at any point of the run, so an
 * extra measurement gets fresh processes when it needs them (the memory soak does).
 */

export interface Stack {
  readonly upstream: RunningChild;
  readonly redis: RunningChild;
  readonly redisProbe: RedisProbe;
  /** Where gateway processes write V8 CPU profiles (`--cpu-prof`), if they do. */
  readonly profileDir: string | undefined;
  /** Process id → target name, to tell whose CPU profile a file is. */
  readonly processNames: Map<number, string>;
}

export type Store = 'memory' | 'redis';

export interface GatewayTargetOptions {
  readonly name?: string;
  /** More than 1: a cluster of that many processes sharing the port. */
  readonly workers?: number;
  /** Lets stats requests collect garbage first (the memory soak). */
  readonly exposeGc?: boolean;
  /** false: `metering.ledger.enabled: false`, no usage rows written (`--ledger-cost`). */
  readonly ledger?: boolean;
  /**
   * `baseline`: only what the pre-ledger gateway's bench target configured (no ledger, no
   * ownership, no prices or cost budgets, log level silent), for a like-for-like row beside it.
   */
  readonly features?: 'all' | 'baseline';
  /** An OTLP/HTTP collector: tracing on, every sampled span exported there (`--tracing`). */
  readonly tracingEndpoint?: string;
  /** The traced gateway's `tracing.sampleRatio` (default 1.0). */
  readonly tracingRatio?: number;
  /** A CloudEvents sink: the usage export on, every ledger row sent there (`--export`). */
  readonly exportUrl?: string;
  /** Model allow-lists (SPEC 21) on the key and its team (`--model-lists`). */
  readonly modelLists?: boolean;
  /** Model routing (SPEC 22): `routes` three routes and an alias table; `alias` the same with the bench's model an alias. */
  readonly modelRouting?: 'routes' | 'alias';
  /** Budget alerts (`--alerts`): true, decided and counted by a sink of the bench's own; false, turned off (no thresholds); absent, the default (to the outbox). */
  readonly alerts?: boolean;
}

// The children this room forks: the fake upstream and the targets, beside this file.
const UPSTREAM = modulePath(import.meta.dirname, 'upstream');
const TARGET = modulePath(import.meta.dirname, 'target');

export async function startStack(cpuProf: boolean): Promise<Stack> {
  const upstream = await startChild('upstream', UPSTREAM, [], {});
  const redis = await startRedis();
  const profileDir = cpuProf ? mkdtempSync(join(tmpdir(), 'tollgate-bench-prof-')) : undefined;
  return { upstream, redis, redisProbe: new RedisProbe(redis.url), profileDir, processNames: new Map() };
}

/** The load generator straight to the fake upstream: the ceiling of the machine. */
export function directTarget(stack: Stack): Target {
  return { name: 'direct', url: stack.upstream.url };
}

// Explicit values, so that BENCH_* variables in the parent's environment never leak into a target.
export const targetEnv = (stack: Stack, redisUrl: string, workers: number, ledger = true, features: 'all' | 'baseline' = 'all'): Record<string, string> => ({
  BENCH_UPSTREAM_URL: stack.upstream.url,
  BENCH_REDIS_URL: redisUrl,
  BENCH_WORKERS: String(workers),
  BENCH_LEDGER: ledger ? '1' : '0',
  BENCH_FEATURES: features,
});

/** V8 CPU profiling flags when the run asks for profiles (`--cpu-prof`): the gateways', and the bare proxy's to compare with. */
const profileArgs = (stack: Stack): string[] => (stack.profileDir ? ['--cpu-prof', '--cpu-prof-dir', stack.profileDir] : []);

export async function startProxyTarget(stack: Stack): Promise<Target> {
  const child = await startChild('proxy', TARGET, ['proxy'], targetEnv(stack, '', 1), profileArgs(stack));
  if (child.child.pid !== undefined) stack.processNames.set(child.child.pid, 'proxy');
  return { name: 'proxy', url: child.url, process: child };
}

export async function startGatewayTarget(stack: Stack, store: Store, options: GatewayTargetOptions = {}): Promise<Target> {
  const name = options.name ?? `gateway-${store}`;
  const execArgv = [...profileArgs(stack), ...(options.exposeGc ? ['--expose-gc'] : [])];
  const env = { ...targetEnv(stack, store === 'redis' ? stack.redis.url : '', options.workers ?? 1, options.ledger, options.features), BENCH_TRACING_ENDPOINT: options.tracingEndpoint ?? '', BENCH_TRACING_RATIO: String(options.tracingRatio ?? 1), BENCH_MODEL_LISTS: options.modelLists ? '1' : '0', BENCH_MODEL_ROUTING: options.modelRouting ?? '', BENCH_ALERTS: options.alerts === undefined ? '' : options.alerts ? '1' : 'off', BENCH_EXPORT_URL: options.exportUrl ?? '' };
  const child = await startChild(name, TARGET, ['gateway'], env, execArgv);
  // A cluster primary only hands out connections: its workers serve (their profiles are unnamed).
  if (child.child.pid !== undefined) stack.processNames.set(child.child.pid, (options.workers ?? 1) > 1 ? `${name} primary` : name);
  return { name, url: child.url, process: child, ...(store === 'redis' ? { redis: stack.redisProbe } : {}) };
}
