import { configSchema, type Config, type LimitSet } from '../../../src/config/index.js';
import type { Principal, ProjectRef } from '../../../src/auth/index.js';
import { GatewayError } from '../../../src/errors.js';
import { type Admission, type AdmissionRequest, createLimiter, createLimitStore, decodeScopeNumbers, type EventSink, type Limiter, type LimitEvents, RedisStore, type ScopeNumbers } from '../../../src/limits/index.js';
import { connectRedis } from '../../../src/redis/index.js';
import { REPLY_SILENCE_MS } from '../../helpers/redis.js';
import type { Redis } from 'ioredis';

/** What a test may vary in the config; everything else is the schema's default. */
export interface LimitSettings {
  readonly projects?: Record<string, LimitSet>;
  readonly onStoreError?: 'open' | 'closed';
  readonly redisUrl?: string;
  readonly cluster?: string[];
  readonly keyPrefix?: string;
  /** Default REPLY_SILENCE_MS: only tests of a silent Redis want the product's short deadline. */
  readonly commandTimeoutMs?: number;
}

export function limitsConfig(settings: LimitSettings = {}): Config {
  return configSchema.parse({
    upstreams: { service: { url: 'http://127.0.0.1:9' }, inference: { url: 'http://127.0.0.1:9' } },
    rateLimits: { onStoreError: settings.onStoreError ?? 'open', projects: settings.projects ?? {} },
    redis: {
      url: settings.redisUrl ?? '',
      cluster: settings.cluster,
      keyPrefix: settings.keyPrefix ?? 'tollgate:',
      commandTimeoutMs: settings.commandTimeoutMs ?? REPLY_SILENCE_MS,
    },
  });
}

/**
 * A limiter built the way the app builds one: the store its config's mode asks for, on a Redis
 * connection of its own, closed with the limiter. `leaseTtlMs` shortens Redis leases below the
 * config's minimum, for tests of their expiry.
 */
export function buildLimiter(config: Config, events: LimitEvents, leaseTtlMs?: number, sink?: EventSink): Limiter {
  const connection = connectRedis(config.redis);
  const onBackgroundError = (): void => events.onStoreError('redis');
  const store =
    connection && leaseTtlMs !== undefined
      ? new RedisStore(connection, { replySilenceMs: config.redis.commandTimeoutMs, leaseTtlMs, onBackgroundError })
      : createLimitStore(config, connection, onBackgroundError);
  const limiter = createLimiter(config, store, events, undefined, sink);
  return {
    admit: (request) => limiter.admit(request),
    ready: () => limiter.ready(),
    storeConnected: () => limiter.storeConnected(),
    whenConnected: (timeoutMs) => limiter.whenConnected(timeoutMs),
    settled: () => limiter.settled(),
    configure: (next) => limiter.configure(next),
    readTeam: (team) => limiter.readTeam(team),
    async close() {
      await limiter.close();
      connection?.disconnect();
    },
  };
}

export function keyPrincipal(id: string, limits: LimitSet, team = 'team-a'): Principal {
  return { kind: 'key', id, team, projects: new Set(['*']), defaultProject: 'default', limits };
}

export function jwtPrincipal(subject: string, limits: LimitSet, team = 'team-a'): Principal {
  return { kind: 'jwt', id: subject, team, projects: new Set(['*']), defaultProject: 'default', limits };
}

/** An admission request reserving `estimatedTokens` and, for budgets, `estimatedCostNanos` (nano-units of the currency). */
export function request(principal: Principal, project: string, estimatedTokens = 0, estimatedCostNanos = 0): AdmissionRequest {
  const [team, name] = project.split('/') as [string, string];
  const ref: ProjectRef = { team, project: name };
  return { principal, project: ref, estimatedTokens, estimatedCostNanos };
}

/** LimitEvents that remember what they were told. */
export function recordEvents(): LimitEvents & { readonly rejections: string[]; storeErrors: number } {
  const recorder = {
    rejections: [] as string[],
    storeErrors: 0,
    onRejected(scope: string, limit: string) {
      recorder.rejections.push(`${scope}:${limit}`);
    },
    onStoreError() {
      recorder.storeErrors += 1;
    },
  };
  return recorder;
}

/** Runs `count` admissions at once, spread round-robin over the limiters. */
export async function admitAll(
  limiters: readonly Limiter[],
  count: number,
  make: () => AdmissionRequest,
): Promise<{ admitted: Admission[]; rejected: GatewayError[] }> {
  const results = await Promise.allSettled(Array.from({ length: count }, (_, i) => limiters[i % limiters.length]!.admit(make())));
  const admitted: Admission[] = [];
  const rejected: GatewayError[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') admitted.push(result.value);
    else if (result.reason instanceof GatewayError) rejected.push(result.reason);
    else throw result.reason;
  }
  return { admitted, rejected };
}

/** The GatewayError an admission was refused with (fails the test when it was admitted). */
export async function refusal(promise: Promise<Admission>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected the admission to be refused');
}

/** Seconds until the next UTC midnight, as Retry-After would say it at `now`. */
export function secondsToUtcMidnight(now: number): number {
  return Math.ceil((86_400_000 - (now % 86_400_000)) / 1000);
}

/** What a scope's hash in Redis holds: counters of live windows, and in-flight leases. */
export interface ScopeRecord {
  readonly counters: Record<string, number>;
  /** The in-flight count the script reads, which must equal the number of live leases. */
  readonly slots: number;
  /** When each live lease lapses unless renewed (epoch ms, Redis clock). */
  readonly leaseEnds: number[];
  readonly numbers: ScopeNumbers;
}

/** Reads one scope's hash the way the script does (src/limits/redis-scripts.ts), against Redis's clock. */
export async function readScope(redis: Redis, key: string): Promise<ScopeRecord> {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const hash = await redis.hgetallBuffer(key);
  const numbers = decodeScopeNumbers(hash.c ?? Buffer.alloc(0));
  const counters: Record<string, number> = {};
  for (const [limit, counter] of Object.entries(numbers.counters)) if (counter.end > now) counters[limit] = counter.used;
  const leaseEnds = Object.entries(hash)
    .filter(([field]) => field.startsWith('L:'))
    .map(([, value]) => Number(value.toString()))
    .filter((end) => end > now);
  if (numbers.inflight !== leaseEnds.length) throw new Error(`scope ${key} counts ${numbers.inflight} in flight but holds ${leaseEnds.length} live leases`);
  return { counters, slots: numbers.inflight, leaseEnds, numbers };
}
