import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/app.js';
import { validateConfig, type Config } from '../../src/config/index.js';
import { createGatewayServer } from '../../src/server.js';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../fixtures/training-service.js';
import { ADMIN_ENTRIES, KEY_ENTRIES } from './keys.js';
import { REPLY_SILENCE_MS } from './redis.js';

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly gateway: Gateway;
  readonly server: Server;
  readonly config: Config;
  close(): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | T[K] : T[K] };

/** A fresh SQLite file for one gateway: test files run in parallel and never share a database. */
export function tempDatabasePath(): string {
  return join(mkdtempSync(join(tmpdir(), 'tollgate-db-')), 'tollgate.db');
}

/** The config every integration test starts from: test keys, the given upstreams, memory store, a SQLite file of its own. */
export function testConfig(upstreams: { service: string; inference: string }, overrides: Record<string, unknown> = {}): Config {
  const base: Record<string, unknown> = {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    upstreams: { service: { url: upstreams.service, timeoutMs: 2000 }, inference: { url: upstreams.inference, timeoutMs: 2000 } },
    auth: { keys: KEY_ENTRIES, admin: { keys: ADMIN_ENTRIES } },
    database: { path: tempDatabasePath() },
    // Used only when a test names a Redis; see REPLY_SILENCE_MS.
    redis: { commandTimeoutMs: REPLY_SILENCE_MS },
    logging: { level: 'silent' },
  };
  return validateConfig(mergeDeep(base, overrides), 'test config');
}

function mergeDeep(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    if (value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object' && !Array.isArray(current)) {
      out[key] = mergeDeep(current as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Builds the gateway from config and listens on a free loopback port (`configPath`: what a reload re-reads; `consoleDir`: a console build). */
export async function startGateway(config: Config, configPath?: string, options: Pick<GatewayOptions, 'consoleDir' | 'events'> = {}): Promise<RunningGateway> {
  const gateway = await createGateway(config, { logger: pino({ level: 'silent' }), ...(configPath === undefined ? {} : { configPath }), ...options });
  const server = createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    gateway,
    server,
    config,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}

/** A gateway in front of fresh fixture upstreams: the usual integration-test setup. */
export async function startStack(overrides: Record<string, unknown> = {}): Promise<{
  service: FakeUpstream;
  inference: FakeUpstream;
  gw: RunningGateway;
  close(): Promise<void>;
}> {
  const service = await startTrainingService();
  const inference = await startInferenceHost();
  const gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, overrides));
  return {
    service,
    inference,
    gw,
    async close() {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
    },
  };
}

/**
 * The value of one series on the gateway's /metrics, e.g. `tollgate_store_errors_total{store="redis"}`
 * (name and labels as exposed); NaN when the series is not there.
 */
export async function metricValue(baseUrl: string, series: string): Promise<number> {
  return seriesValue(await (await fetch(`${baseUrl}/metrics`)).text(), series);
}

/** The value of one series in a Prometheus exposition text; NaN when the series is not there. */
export function seriesValue(exposition: string, series: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1).split(' ', 1)[0]);
}

/** What /readyz lists for a config's upstreams while every target is up and idle (SPEC 19). */
export function readyUpstreams(config: Config): Record<string, { target: string; state: 'up'; outstanding: 0 }[]> {
  return Object.fromEntries(
    Object.entries(config.upstreams).map(([name, upstream]) => [
      name,
      (upstream.targets ?? [{ url: upstream.url! }]).map(({ url }) => ({ target: new URL(url).host, state: 'up' as const, outstanding: 0 as const })),
    ]),
  );
}

export type { DeepPartial };
