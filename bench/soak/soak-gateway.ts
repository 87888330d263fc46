import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { sha256Hex } from '../../src/key-secrets.js';
import { freePort, modulePath, moduleUrl, startChild, type RunningChild } from '../processes/children.js';
import { NEVER_REACHED_LIMITS } from '../load-runs/workload.js';

/**
 * The gateway `npm run soak` drives: dist/src/main.js (what `npm start` runs) with a config file
 * of its own that turns every feature on — static keys with limits on the key and on
 * team/project entries, every limit kind, the Redis store (`onStoreError: open`), prices and
 * cost budgets, the usage ledger (a SQLite file in a temporary directory, or PostgreSQL),
 * ownership of training resources, admin keys and bearer-protected metrics.
 */

export interface SoakKey {
  readonly id: string;
  /** The bearer secret (the config holds only its SHA-256). */
  readonly secret: string;
  readonly team: string;
}

const key = (id: string, team: string): SoakKey => ({ id, secret: `tg-${id}-6f1e2d3c4b5a69788796a5b4`, team });

/** Most of the traffic: limits on every scope far above what the soak sends (checked and charged, never hit). */
export const MAIN_KEY = key('soak-main', 'soak-a');
/** A key with a low request rate: part of its traffic is answered 429 every minute. */
export const RPM_KEY = key('soak-rpm', 'soak-b');
/** A key whose team/project allows few requests in flight: held streams crowd it. */
export const CONCURRENCY_KEY = key('soak-conc', 'soak-c');
export const ADMIN_KEY = key('soak-ops', 'admin');
export const METRICS_TOKEN = 'soak-metrics-2b7c9d';

export const RPM_LIMIT = 60;
export const CONCURRENCY_LIMIT = 2;
export const KEY_PREFIX = 'tollgate-soak:';
/** The priced chat model (cost is reserved, settled and written to the ledger). */
export const CHAT_MODEL = 'Qwen/Qwen3-14B';


interface SoakConfigInput {
  readonly upstreamUrl: string;
  readonly redisUrl: string;
  readonly databasePath: string;
}

function soakConfig({ upstreamUrl, redisUrl, databasePath }: SoakConfigInput): Record<string, unknown> {
  const staticKey = (k: SoakKey, limits: Record<string, number>): Record<string, unknown> => ({ id: k.id, sha256: sha256Hex(k.secret), team: k.team, projects: ['*'], limits });
  return {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    upstreams: { service: { url: upstreamUrl, timeoutMs: 10_000 }, inference: { url: upstreamUrl, timeoutMs: 10_000 } },
    auth: {
      keys: [staticKey(MAIN_KEY, NEVER_REACHED_LIMITS), staticKey(RPM_KEY, { rpm: RPM_LIMIT }), staticKey(CONCURRENCY_KEY, {})],
      admin: { keys: [{ id: ADMIN_KEY.id, sha256: sha256Hex(ADMIN_KEY.secret) }] },
    },
    metering: { forceStreamUsage: true, prices: { currency: 'USD', models: { [CHAT_MODEL]: { prompt: 0.05, completion: 0.22 } } } },
    // open: during the Redis outage requests are admitted against per-instance limits. In
    // closed mode the gateway itself would answer 503 store_unavailable for the outage.
    rateLimits: {
      onStoreError: 'open',
      projects: { [`${MAIN_KEY.team}/*`]: NEVER_REACHED_LIMITS, [`${MAIN_KEY.team}/chat`]: NEVER_REACHED_LIMITS, [`${CONCURRENCY_KEY.team}/*`]: { concurrency: CONCURRENCY_LIMIT } },
    },
    ownership: { mode: 'on', scope: 'team', unknown: 'deny' },
    database: { path: databasePath },
    redis: { url: redisUrl, keyPrefix: KEY_PREFIX },
    metrics: { bearerToken: METRICS_TOKEN },
    logging: { level: 'warn' },
  };
}

export interface SoakGateway {
  readonly process: RunningChild;
  readonly url: string;
  /** Holds the config file and the SQLite ledger. */
  readonly dataDir: string;
}

/**
 * Writes the config and starts the gateway. Every environment override main.ts honours is set
 * here, so nothing in the parent's environment (a REDIS_URL to a shared server) leaks in.
 */
export async function startSoakGateway(upstreamUrl: string, redisUrl: string, databaseUrl: string): Promise<SoakGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-soak-'));
  const configPath = join(dataDir, 'tollgate.yaml');
  writeFileSync(configPath, stringify(soakConfig({ upstreamUrl, redisUrl, databasePath: join(dataDir, 'tollgate.db') })));
  const port = await freePort();
  const probe = moduleUrl(import.meta.dirname, 'soak-probe');
  const env = {
    TOLLGATE_CONFIG: configPath,
    HOST: '127.0.0.1',
    PORT: String(port),
    SERVICE_URL: upstreamUrl,
    INFERENCE_URL: upstreamUrl,
    REDIS_URL: redisUrl,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn',
  };
  const child = await startChild('gateway', modulePath(import.meta.dirname, '../../src/main'), [], env, ['--import', probe, '--expose-gc']);
  return { process: child, url: child.url, dataDir };
}
