import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { LimitName } from '../../src/limit-kinds/index.js';
import { decodeScopeNumbers } from '../../src/limits/index.js';
import { CONCURRENCY_KEY, CONCURRENCY_LIMIT, KEY_PREFIX, RPM_KEY, RPM_LIMIT } from './soak-gateway.js';
import type { RequestPlan, SoakTraffic } from './soak-traffic.js';

/**
 * Do the limits still hold exactly what they should after the soak (and its Redis restart)?
 *   - leases: once traffic stops, no scope hash in Redis holds a lease (every in-flight slot
 *     taken was given back, on every scope);
 *   - concurrency: the team/project with `concurrency: N` admits exactly N held streams and
 *     refuses the next (the gateway's view agrees with Redis's, fallback state gone);
 *   - rpm: in a fresh window, the `rpm: N` key admits exactly N requests and refuses the next,
 *     and Redis's counter says N (the gateway counts in Redis again, not in its fallback).
 */

export interface LeaseCheck {
  readonly leaseSets: number;
  readonly leases: number;
  readonly waitedMs: number;
}

export interface AdmissionProbe {
  readonly limit: number;
  readonly admitted: number;
  /** Whether the request after the limit was refused with 429. */
  readonly refusedNext: boolean;
  /** What Redis counted (rpm probe), if read. */
  readonly redisCount?: number;
  readonly note?: string;
}

const LEASE_WAIT_MS = 5000;

/** Leases still held in Redis, polled until none is left or LEASE_WAIT_MS have passed. */
export async function checkLeases(redis: Redis): Promise<LeaseCheck> {
  const started = performance.now();
  for (;;) {
    let leaseSets = 0;
    let leases = 0;
    for await (const keys of redis.scanStream({ match: `${KEY_PREFIX}*`, count: 500 }) as AsyncIterable<string[]>) {
      for (const key of keys) {
        // A scope's hash (src/limits/redis-scripts.ts): its in-flight count, and one L: field per lease.
        const blob = await redis.hgetBuffer(key, 'c');
        const counted = blob ? decodeScopeNumbers(blob).inflight : 0;
        const fields = (await redis.hkeys(key)).filter((field) => field.startsWith('L:')).length;
        const members = Math.max(counted, fields);
        if (members > 0) {
          leaseSets++;
          leases += members;
        }
      }
    }
    const waitedMs = performance.now() - started;
    if (leases === 0 || waitedMs > LEASE_WAIT_MS) return { leaseSets, leases, waitedMs };
    await sleep(100);
  }
}

const heldStream = (kind: string, holdMs: number): RequestPlan => ({
  kind,
  method: 'POST',
  path: '/v1/chat/completions',
  headers: { authorization: `Bearer ${CONCURRENCY_KEY.secret}`, 'openai-project': `${CONCURRENCY_KEY.team}/probe`, 'content-type': 'application/json', 'x-soak-hold': '1' },
  body: JSON.stringify({ model: 'Qwen/Qwen3-14B', messages: [{ role: 'user', content: 'probe' }], max_tokens: 8, stream: true }),
  expect: [200, 429],
  ledgerRow: true,
  read: { mode: 'leave-mid-stream', holdMs },
});

/** N streams held open at once on the `concurrency: N` team/project, then one more. */
export async function probeConcurrency(traffic: SoakTraffic): Promise<AdmissionProbe> {
  const held = Array.from({ length: CONCURRENCY_LIMIT }, () => traffic.launch(heldStream('probe: concurrency, held', 1500)));
  // The held streams are admitted and streaming well before this.
  await sleep(500);
  const next = await traffic.launch(heldStream('probe: concurrency, one more', 0));
  const outcomes = await Promise.all(held);
  return { limit: CONCURRENCY_LIMIT, admitted: outcomes.filter((o) => o.status === 200).length, refusedNext: next.status === 429 };
}

const modelsRequest = (kind: string): RequestPlan => ({
  kind,
  method: 'GET',
  path: '/v1/models',
  headers: { authorization: `Bearer ${RPM_KEY.secret}`, 'openai-project': `${RPM_KEY.team}/probe` },
  expect: [200, 429],
  ledgerRow: true,
  read: { mode: 'full' },
});

/** The Redis hash of a key's limits (src/limits/plan.ts: `<prefix>{team}:key:<id>`). */
const keyScopeKey = (team: string, id: string): string => `${KEY_PREFIX}{${team}}:key:${id}`;

/** What the scope's hash counts for `limit` in its live window, and the ms until that window ends (0: none). */
async function readCounter(redis: Redis, key: string, limit: LimitName): Promise<{ used: number; msLeft: number } | undefined> {
  const blob = await redis.hgetBuffer(key, 'c');
  const counter = blob ? decodeScopeNumbers(blob).counters[limit] : undefined;
  if (!counter) return undefined;
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return counter.end > now ? { used: counter.used, msLeft: counter.end - now } : undefined;
}

/**
 * Waits for the `rpm` key's window to end (at most a minute), then sends N + 1 requests one
 * after the other: exactly N must be admitted, and Redis must have counted N.
 */
export async function probeRpm(traffic: SoakTraffic, redis: Redis, log: (line: string) => void): Promise<AdmissionProbe> {
  const counter = keyScopeKey(RPM_KEY.team, RPM_KEY.id);
  const ttl = (await readCounter(redis, counter, 'rpm'))?.msLeft ?? 0;
  if (ttl > 0) {
    log(`rpm probe: waiting ${(ttl / 1000).toFixed(0)} s for the soak-rpm key's window to end`);
    await sleep(ttl + 200);
  }
  let admitted = 0;
  let refusedNext = false;
  for (let i = 0; i <= RPM_LIMIT; i++) {
    const outcome = await traffic.launch(modelsRequest('probe: rpm'));
    if (outcome.status === 200) admitted++;
    else if (i === RPM_LIMIT && outcome.status === 429) refusedNext = true;
  }
  const counted = (await readCounter(redis, counter, 'rpm'))?.used ?? Number.NaN;
  const note = Number.isNaN(counted) ? `no counter at ${counter}: the gateway did not count in Redis` : undefined;
  return { limit: RPM_LIMIT, admitted, refusedNext, redisCount: counted, ...(note === undefined ? {} : { note }) };
}
