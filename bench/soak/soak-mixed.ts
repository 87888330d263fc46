import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/postgres.js';
import { killChildrenOnExit, modulePath, runMain, startChild, startRedis, stopAll, type RestartableRedis } from '../processes/children.js';
import { ask } from '../processes/ipc.js';
import { log } from '../processes/log.js';
import { loadNow, repositoryRoot } from '../processes/machine.js';
import { readLoopDelay } from '../processes/loop-delay.js';
import { queryStats } from '../processes/process-stats.js';
import { startSoakGateway } from './soak-gateway.js';
import { checkLeases, probeConcurrency, probeRpm } from './soak-limits.js';
import { appendSoakRun, soakReport, type OutageRecord, type RssPoint, type TimelinePoint } from './soak-report.js';
import { SoakTraffic, type Tally } from './soak-traffic.js';
import type { UpstreamTally } from './soak-upstream.js';
import { reconcileUsage } from './soak-usage.js';

/**
 * `npm run soak` — the gateway under a steady mixed load for a long while, with its Redis
 * killed and restarted half-way (issue 14, "Soak"). Not part of `npm test`.
 *
 *   npm run soak                                   10 minutes at 200 requests/s (writes bench/RESULTS.md)
 *   npm run soak -- --minutes 1 --rate 100         a short run (prints only)
 *
 * Flags: --minutes (10), --rate requests/s (200), --outage-seconds Redis stays down (5),
 * --max-loop-delay-ms bound on the event-loop delay p99 (20), --max-rss-growth (1.2),
 * --postgres (the ledger in a fresh PostgreSQL database at 127.0.0.1:5432, user postgres,
 * dropped at the end; TEST_PG_URL names another server; default: a SQLite file),
 * --write 1|0 (append the run to bench/RESULTS.md; default: only a run with default settings).
 * SOAK_LOG_LEVEL sets the gateway's log level (warn).
 *
 * What runs (all on loopback, each its own process): a fake upstream (soak-upstream.ts),
 * a private redis-server on a free port (never the shared one on 6379), and the gateway as
 * `npm start` runs it (dist/src/main.js, config written to a temporary directory: every feature
 * on, soak-gateway.ts) with soak-probe.ts preloaded to report its memory and
 * event-loop delay. The clients (soak-traffic.ts) send the mix at a steady rate: chat,
 * streamed chat read whole, streams the client leaves mid-way, chats the client leaves before
 * the answer, /v1/models, training workflows through /v1/preview/*, health, and 401, 400, 403,
 * 404, 422 and 429 (an rpm-limited key, a concurrency-limited team/project).
 *
 * What it checks (PASS/FAIL each; exit code 1 on any FAIL):
 *   - 5xx made by the gateway: 0 (a status ≥ 500 without the upstream's x-soak-upstream mark).
 *     The gateway runs with `onStoreError: open`, so the outage is served from per-instance
 *     limits: a 503 store_unavailable (closed mode) would be the gateway's own 5xx;
 *   - every answer as expected (statuses per kind, streams ending with [DONE], no usage chunk
 *     the client did not ask for, no connection errors or timeouts);
 *   - gateway RSS after a forced GC at the end of warm-up, at the midpoint (before the restart)
 *     and near the end: middle and end within +20% of start;
 *   - event-loop delay p99 of the gateway over the traffic (perf_hooks, beyond its 10 ms tick);
 *   - usage reconciles: one ledger row per request that should have one, with the status the
 *     client got; its tokens equal to the upstream's usage for that request, or, for exactly
 *     the streams a client left, a non-zero estimate; /admin/usage and tollgate_tokens_total
 *     add up to the same; no row dropped;
 *   - limits reconcile: no lease left in Redis once traffic stops; the concurrency-2 project
 *     admits exactly 2 held streams and refuses a third; in a fresh window the rpm-60 key admits
 *     exactly 60 and refuses the 61st, and Redis counted 60;
 *   - client aborts reach the upstream: every stream a client left is closed upstream, every
 *     request a client left before its answer is abandoned upstream;
 *   - the Redis restart was exercised (requests answered during it, store errors counted).
 */

interface SoakSettings {
  readonly minutes: number;
  readonly rate: number;
  readonly outageSeconds: number;
  readonly maxLoopDelayMs: number;
  readonly maxRssGrowth: number;
  readonly postgres: boolean;
  readonly write: boolean;
}

const DEFAULTS = { minutes: 10, rate: 200, 'outage-seconds': 5, 'max-loop-delay-ms': 20, 'max-rss-growth': 1.2 } as const;
type Numeric = keyof typeof DEFAULTS;
const TIMELINE_EVERY_SEC = 10;

function readSettings(argv: readonly string[]): SoakSettings {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      rate: { type: 'string' },
      'outage-seconds': { type: 'string' },
      'max-loop-delay-ms': { type: 'string' },
      'max-rss-growth': { type: 'string' },
      postgres: { type: 'boolean' },
      write: { type: 'string' },
    },
  });
  const number = (name: Numeric): number => {
    const raw = values[name];
    const value = raw === undefined ? DEFAULTS[name] : Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`soak: --${name} must be a positive number, got "${raw ?? ''}"`);
    return value;
  };
  const settings = {
    minutes: number('minutes'),
    rate: number('rate'),
    outageSeconds: number('outage-seconds'),
    maxLoopDelayMs: number('max-loop-delay-ms'),
    maxRssGrowth: number('max-rss-growth'),
    postgres: values.postgres === true,
  };
  if (settings.minutes * 60 < 20) throw new Error('soak: --minutes must give at least 20 seconds (warm-up, restart and end marks need room)');
  const isDefault = (Object.keys(DEFAULTS) as Numeric[]).every((name) => values[name] === undefined) && !settings.postgres;
  return { ...settings, write: values.write === undefined ? isDefault : values.write === '1' };
}

/** Kills the private Redis, keeps it down, starts it on the same port; answers are counted as "during" until the gateway has had a second to reconnect. */
async function restartRedis(redis: RestartableRedis, tally: Tally, outageSeconds: number, atSec: number): Promise<OutageRecord> {
  log(`soak: ${atSec} s — killing redis-server (SIGKILL) for ${outageSeconds} s`);
  tally.duringOutage = true;
  const killedAt = performance.now();
  await redis.kill();
  await sleep(outageSeconds * 1000);
  await redis.restart();
  const downMs = performance.now() - killedAt;
  log(`soak: redis-server is back on port ${redis.port} after ${(downMs / 1000).toFixed(1)} s`);
  // src/redis/connection.ts reconnects within ~1 s of Redis listening again.
  await sleep(1000);
  tally.duringOutage = false;
  return { killedAtSec: atSec, downMs, requestsDuring: tally.answeredDuringOutage };
}

async function main(): Promise<void> {
  killChildrenOnExit();
  const settings = readSettings(process.argv.slice(2));
  const loadAtStart = loadNow();
  const durationSec = Math.round(settings.minutes * 60);
  const marks = { start: Math.min(30, Math.max(5, Math.round(durationSec * 0.05))), middle: Math.floor(durationSec / 2), end: durationSec - 2 };

  const upstream = await startChild('upstream', modulePath(import.meta.dirname, 'soak-upstream'), [], {});
  const redis = await startRedis();
  let database: TestDatabase | undefined;
  if (settings.postgres) database = await createTestDatabase();
  const gateway = await startSoakGateway(upstream.url, redis.url, database?.url ?? '');
  process.once('exit', () => rmSync(gateway.dataDir, { recursive: true, force: true }));
  const channel = gateway.process.child;
  log(`soak: gateway ${gateway.url} (pid ${channel.pid ?? '?'}), redis ${redis.url}, ledger ${database ? `PostgreSQL ${database.name}` : 'SQLite'}`);
  log(`soak: ${settings.rate} req/s for ${durationSec} s; RSS marks at ${marks.start} s, ${marks.middle} s (then Redis restart), ${marks.end} s`);

  const startedAt = new Date();
  const traffic = new SoakTraffic(gateway.url);
  const tally = traffic.tally;
  const rss: RssPoint[] = [];
  const timeline: TimelinePoint[] = [];
  let outage: Promise<OutageRecord> | undefined;
  let lastSample = 0;
  const rssAt = async (label: string, atSec: number): Promise<void> => {
    rss.push({ label, atSec, rssBytes: (await queryStats(channel, true)).rssBytes });
  };
  await readLoopDelay(channel, true);
  await traffic.run(settings.rate, durationSec * 1000, async (second) => {
    if (rss.length === 0 && second >= marks.start) await rssAt('start', second);
    if (rss.length === 1 && second >= marks.middle) {
      await rssAt('middle', second);
      outage = restartRedis(redis, tally, settings.outageSeconds, second);
    }
    if (rss.length === 2 && second >= marks.end) await rssAt('end', second);
    if (second - lastSample >= TIMELINE_EVERY_SEC) {
      lastSample = second;
      const [stats, delay] = await Promise.all([queryStats(channel), readLoopDelay(channel)]);
      timeline.push({ atSec: second, answered: tally.sent, rssBytes: stats.rssBytes, loop: delay.window });
      log(
        `soak: ${second} s — ${tally.sent.toLocaleString('en-US')} answered, RSS ${(stats.rssBytes / 2 ** 20).toFixed(1)} MB, ` +
          `loop delay p99 ${delay.window.p99Ms.toFixed(1)} ms, gateway 5xx ${tally.gateway5xxCount}, unexpected ${tally.problemCount}`,
      );
    }
  });
  // Read at once: the checks below leave the gateway mostly idle, which would flatter the figure.
  const loop = (await readLoopDelay(channel)).run;
  if (!outage || rss.length < 3) throw new Error('soak: the run ended before its marks (is --minutes too short?)');
  const outageRecord = await outage;

  log('soak: traffic over; checking leases, limits and the ledger');
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  const leasesAfterTraffic = await checkLeases(probe);
  const concurrency = await probeConcurrency(traffic);
  const leasesAfterProbe = await checkLeases(probe);
  const rpm = await probeRpm(traffic, probe, log);
  await traffic.drain();
  probe.disconnect();
  const upstreamTally = await ask<UpstreamTally>(upstream.child, 'soak-upstream-tally', null, 30_000);
  const usage = await reconcileUsage(gateway.url, startedAt, tally.expectedRows, upstreamTally);
  traffic.close();

  const args = process.argv.slice(2).join(' ');
  const [start, middle, end] = rss as [RssPoint, RssPoint, RssPoint];
  const { markdown, passed } = soakReport({
    date: startedAt.toISOString(),
    command: `npm run soak${args ? ` -- ${args}` : ''}`,
    settings:
      `${settings.rate} req/s for ${settings.minutes} min (${tally.sent.toLocaleString('en-US')} requests with the probes), ` +
      `Redis killed at ${marks.middle} s for ${settings.outageSeconds} s, RSS after a forced GC at ${start.atSec} s, ${middle.atSec} s and ${end.atSec} s, ` +
      `ledger in ${settings.postgres ? 'PostgreSQL' : 'a SQLite file'}`,
    loadAtStart,
    tally,
    rss: [start, middle, end],
    maxRssGrowth: settings.maxRssGrowth,
    loop,
    maxLoopDelayMs: settings.maxLoopDelayMs,
    timeline,
    outage: outageRecord,
    leasesAfterTraffic,
    leasesAfterProbe,
    concurrency,
    rpm,
    usage,
    upstream: upstreamTally,
  });
  process.stdout.write(`\n${markdown}\n`);
  await stopAll();
  await database?.drop();
  if (settings.write) {
    const path = join(repositoryRoot(), 'bench', 'RESULTS.md');
    appendSoakRun(path, markdown);
    log(`soak: appended this run to ${path}`);
  }
  log(`soak: ${passed ? 'PASS' : 'FAIL'}`);
  process.exitCode = passed ? 0 : 1;
}

runMain('soak', main);
