import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProxyServer } from 'http-proxy-3';
import { pino } from 'pino';
import { createGateway } from '../../src/app.js';
import { validateConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/observability/index.js';
import { createGatewayServer } from '../../src/server.js';
import { announceListening, exitWithParent } from '../processes/child-lifecycle.js';
import { answerStatsRequests, ownStats } from '../processes/process-stats.js';
import { runClusterPrimary } from './target-cluster.js';
import { BENCH_KEY_SHA256, BENCH_MODEL, BENCH_PRICES, BENCH_PROJECT, BENCH_TEAM, NEVER_REACHED_LIMITS } from './workload.js';

/**
 * One target under load, in its own process: `proxy` (a bare http-proxy-3 ProxyServer with a
 * keep-alive agent, the floor of this stack) or `gateway` (Tollgate with every feature on;
 * the Redis store when BENCH_REDIS_URL is set, the memory store otherwise; BENCH_LEDGER=0
 * turns the usage ledger off, for `--ledger-cost`; BENCH_TRACING_ENDPOINT turns tracing on at
 * BENCH_TRACING_RATIO (default 1.0) with that collector, for `--tracing`). With BENCH_WORKERS
 * above 1 this process is a cluster primary and that many workers serve one shared port.
 * Every serving process answers the parent's stats requests (CPU time, memory).
 */

const kind = process.argv[2];
const upstreamUrl = process.env.BENCH_UPSTREAM_URL ?? '';
const redisUrl = process.env.BENCH_REDIS_URL ?? '';
const workerCount = Number(process.env.BENCH_WORKERS ?? '1');
const ledgerEnabled = process.env.BENCH_LEDGER !== '0';
const features = process.env.BENCH_FEATURES ?? 'all';
/** Set: tracing on, exporting to this collector (`--tracing`), at BENCH_TRACING_RATIO (default 1.0). */
const tracingEndpoint = process.env.BENCH_TRACING_ENDPOINT ?? '';
const tracingRatio = Number(process.env.BENCH_TRACING_RATIO || '1');
/** 1: model allow-lists on the key and its team, matched by wildcards (`--model-lists`). */
const modelLists = process.env.BENCH_MODEL_LISTS === '1';
/** `routes`: three model routes and an alias table the bench's model is not in; `alias`: its model is an alias (`--model-routing`). */
const modelRouting = process.env.BENCH_MODEL_ROUTING ?? '';

/** The routing tables of `--model-routing`: routes by pattern (one to a named upstream), aliases. */
function routingConfig(): { models: Record<string, unknown> } | Record<string, never> {
  if (modelRouting === '') return {};
  const aliases: Record<string, string> = { fast: 'OpenPipe/Qwen3-14B-Instruct', small: 'meta-llama/Llama-3.1-8B-Instruct', tuned: 'wandb-artifact:///acme/rl-demo/qwen3-14b:step41' };
  if (modelRouting === 'alias') aliases[BENCH_MODEL] = 'wandb-artifact:///acme/rl-demo/qwen3-14b:step43';
  return {
    models: {
      routes: [
        { match: 'OpenPipe/*', upstream: 'vllm' },
        { match: 'meta-llama/*', upstream: 'inference' },
        { match: 'wandb-artifact:///*', upstream: 'service' },
      ],
      aliases,
    },
  };
}
/** 1: budget alerts on (`--alerts`): an event sink that counts what it is given (the budgets are never crossed); `off`: no thresholds, nothing decided. */
const alerts = process.env.BENCH_ALERTS === '1';
const alertsOff = process.env.BENCH_ALERTS === 'off';
/** Set: the usage export on, to this CloudEvents sink (`--export`). */
const exportUrl = process.env.BENCH_EXPORT_URL ?? '';

interface Started {
  readonly server: Server;
  close(): Promise<void>;
}

function startBareProxy(): Started {
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' });
  const proxy = new ProxyServer({ target: upstreamUrl, agent, xfwd: true, toProxy: true });
  const server = createServer((req, res) => {
    proxy.web(req, res, {}, () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  return {
    server,
    async close() {
      agent.destroy();
    },
  };
}

/**
 * Tollgate with every feature of the performance issue on: static key, project header, chat
 * validation, every limit kind on the key and on two team/project entries, reserve/settle,
 * prices, the usage ledger (a SQLite file of its own), ownership checks of the chat model,
 * metrics, and one request log line at `info` per request. The log goes to /dev/null through
 * the kind of destination production writes stdout with (pino's default: an asynchronous
 * SonicBoom, lines written together while a write is under way): the line is built and
 * written, the bench's terminal is spared.
 */
async function startGateway(): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  // BENCH_FEATURES=baseline: what the pre-ledger gateway's bench target had (`--baseline`'s like-for-like row).
  const all = features !== 'baseline';
  const limits = all ? NEVER_REACHED_LIMITS : { ...NEVER_REACHED_LIMITS, costPerDay: undefined, costPerMonth: undefined };
  const config = validateConfig(
    {
      server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 1000 },
      upstreams: { service: { url: upstreamUrl, timeoutMs: 10_000 }, inference: { url: upstreamUrl, timeoutMs: 10_000 }, ...(modelRouting === '' ? {} : { vllm: { url: upstreamUrl, timeoutMs: 10_000 } }) },
      auth: { keys: [{ id: 'bench-bot', sha256: BENCH_KEY_SHA256, team: BENCH_TEAM, projects: ['*'], limits, ...(modelLists ? { models: ['wandb-artifact:///acme/rl-demo/*'] } : {}) }] },
      // The team has a record either way, so `--model-lists` compares the lists alone.
      teams: [{ id: BENCH_TEAM, ...(modelLists ? { models: ['@base', 'wandb-artifact:///acme/*'] } : {}) }],
      ...(modelLists ? { models: { groups: { base: ['OpenPipe/*', 'meta-llama/*'] }, default: ['OpenPipe/*'] } } : {}),
      ...routingConfig(),
      metering: { projectHeader: 'OpenAI-Project', forceStreamUsage: true, ...(all ? { prices: BENCH_PRICES } : {}), ledger: { enabled: all && ledgerEnabled } },
      database: { path: join(dataDir, 'tollgate.db') },
      // unknown: allow, since the bench model was never created through the gateway: the lookup still runs.
      ownership: all ? { mode: 'on', scope: 'team', unknown: 'allow' } : { mode: 'off' },
      // closed: a Redis failure shows up as 503s instead of a silent fall-back to memory limits.
      rateLimits: {
        onStoreError: 'closed',
        projects: { [`${BENCH_TEAM}/*`]: limits, [`${BENCH_TEAM}/${BENCH_PROJECT}`]: limits },
      },
      redis: { url: redisUrl, keyPrefix: 'tollgate-bench:' },
      logging: { level: all ? 'info' : 'silent' },
      ...(tracingEndpoint ? { tracing: { enabled: true, endpoint: tracingEndpoint, sampleRatio: tracingRatio } } : {}),
      notifications: {
        ...(alertsOff ? { thresholds: [] } : {}),
        ...(exportUrl ? { export: [{ name: 'bench-sink', url: exportUrl, batch: 500 }], delivery: { pollMs: 1000, exportSettleMs: 1000 } } : {}),
      },
    },
    'bench',
  );
  const logger = createLogger(config.logging.level, pino.destination({ dest: '/dev/null', sync: false }));
  let published = 0;
  const events = alerts ? { publish: () => void (published += 1) } : undefined;
  const journal = process.env.TOLLGATE_LEDGER_JOURNAL;
  const gateway = await createGateway(config, { logger, ...(events ? { events } : {}), ...(journal ? { ledgerJournal: journal } : {}) });
  return {
    server: createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents),
    async close() {
      await gateway.close();
      if (published > 0) process.stderr.write(`bench target: ${published} events published\n`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function serve(): Promise<void> {
  const started = kind === 'proxy' ? startBareProxy() : await startGateway();
  const { server } = started;
  if (kind === 'proxy') {
    // The gateway's server takes these from its config (server.*); the bare proxy gets the same values.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 30_000;
  }
  exitWithParent(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await started.close();
  });
  answerStatsRequests(async (gc) => ownStats(gc));
  server.listen(0, '127.0.0.1', () => announceListening(server));
}

async function main(): Promise<void> {
  if (!upstreamUrl) throw new Error('BENCH_UPSTREAM_URL is not set');
  if (kind !== 'proxy' && kind !== 'gateway') throw new Error(`unknown target kind "${kind ?? ''}" (proxy | gateway)`);
  if (!Number.isInteger(workerCount) || workerCount < 1) throw new Error(`BENCH_WORKERS must be a positive integer, got "${process.env.BENCH_WORKERS ?? ''}"`);
  if (workerCount > 1 && cluster.isPrimary) runClusterPrimary(workerCount);
  else await serve();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
