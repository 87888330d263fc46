import { getPriority } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad } from '../load-runs/load.js';
import { int, mb, ms, ratio } from '../load-runs/report.js';
import { startGatewayTarget, startStack } from '../load-runs/stack.js';
import { freePort, killChildrenOnExit, runMain, stopAll } from '../processes/children.js';
import { log } from '../processes/log.js';
import { describeMachine, loadNow, repositoryRoot } from '../processes/machine.js';
import { queryStats, type MessageChannel, type ProcessStats } from '../processes/process-stats.js';
import { appendSoakRun } from './soak-report.js';

/**
 * `npm run soak:tracing` — SPEC 18 / issue 21: "RSS flat over 200,000 requests with the collector
 * down". The bench's gateway-redis target (every feature on: ledger, ownership, limits, prices,
 * one log line per request) with tracing on at sampleRatio 1.0, its OTLP endpoint a loopback port
 * nothing listens on: every export is refused, every span dropped and counted. Not part of `npm test`.
 *
 *   npm run soak:tracing                        200,000 non-streaming chats (prints; --write 1 appends to bench/RESULTS.md)
 *   npm run soak:tracing -- --requests 20000    a short run
 *
 * RSS is read three ways: after a forced GC (--expose-gc) at the start and after each tenth of the
 * requests (what the process keeps), and without GC every `--sample-ms` while the load runs (the
 * peak). Flat: RSS after GC at the end within `--max-rss-growth` (1.2×) of RSS after GC at the
 * first tenth (which covers JIT, pools and caches reaching their working size, as --soak-rss does).
 * Spans dropped: tollgate_trace_spans_dropped_total from the gateway's /metrics at each checkpoint.
 */

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '32' },
    'sample-ms': { type: 'string', default: '500' },
    'max-rss-growth': { type: 'string', default: '1.2' },
    write: { type: 'string', default: '0' },
  },
});
const TOTAL = Number(flags.requests);
const CONNECTIONS = Number(flags.connections);
const SAMPLE_MS = Number(flags['sample-ms']);
const MAX_GROWTH = Number(flags['max-rss-growth']);
const CHECKPOINTS = 10;

interface Checkpoint {
  readonly requests: number;
  readonly afterGc: ProcessStats;
  readonly dropped: number;
  readonly requestsPerSec: number;
  readonly p99: number;
  readonly failures: number;
}

/** What the gateway's /metrics says: spans dropped, and the requests answered other than 2xx, by status. */
async function scrape(url: string): Promise<{ dropped: number; non2xx: Map<string, number> }> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split('\n');
  const valueOf = (line: string): number => Number(line.slice(line.lastIndexOf(' ') + 1));
  const droppedLine = lines.find((l) => l.startsWith('tollgate_trace_spans_dropped_total'));
  if (!droppedLine) throw new Error('no tollgate_trace_spans_dropped_total in /metrics: is tracing on?');
  const non2xx = new Map<string, number>();
  for (const line of lines) {
    const status = /^tollgate_requests_total\{.*status="(\d+)"/.exec(line)?.[1];
    if (status !== undefined && !status.startsWith('2')) non2xx.set(status, (non2xx.get(status) ?? 0) + valueOf(line));
  }
  return { dropped: valueOf(droppedLine), non2xx };
}

const droppedSpans = async (url: string): Promise<number> => (await scrape(url)).dropped;

/** The export in flight when the load stops is given up within exportTimeoutMs (10 s): its spans are counted then. */
const SETTLE_MS = 12_000;

/** RSS without GC every `SAMPLE_MS` while `work` runs: the highest seen. */
async function peakRssDuring<T>(channel: MessageChannel, work: Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      // A reading that times out (a starved machine) is skipped, not fatal: the next one counts.
      peak = Math.max(peak, (await queryStats(channel).catch(() => undefined))?.rssBytes ?? 0);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  const result = await work;
  running = false;
  await sampling;
  return { result, peak };
}

interface Ending {
  /** Spans dropped SETTLE_MS after the load stopped, and RSS then (after GC). */
  readonly settledDropped: number;
  readonly settled: ProcessStats;
  readonly non2xx: Map<string, number>;
}

function report(machine: string, closedEndpoint: string, start: ProcessStats, checkpoints: readonly Checkpoint[], peak: number, ending: Ending): { markdown: string; passed: boolean } {
  const first = checkpoints[0]!;
  const last = checkpoints.at(-1)!;
  const growth = last.afterGc.rssBytes / first.afterGc.rssBytes;
  const failures = checkpoints.reduce((sum, c) => sum + c.failures, 0);
  const passed = growth <= MAX_GROWTH && failures === 0 && last.dropped > 0;
  const rows = checkpoints.map(
    (c) => `| ${int(c.requests)} | ${mb(c.afterGc.rssBytes)} | ${mb(c.afterGc.heapUsedBytes)} | ${int(c.dropped)} | ${int(c.requestsPerSec)} | ${ms(c.p99)} | ${c.failures} |`,
  );
  const markdown = [
    `### ${new Date().toISOString()} — tracing on, collector down: ${passed ? 'PASS' : 'FAIL'}`,
    '',
    `- **Command:** \`npm run soak:tracing${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\``,
    `- **Settings:** bench gateway-redis target (every feature on), \`tracing: { enabled: true, sampleRatio: 1.0, endpoint: ${closedEndpoint} }\` — a loopback port nothing listens on; ${int(TOTAL)} non-streaming chats from ${CONNECTIONS} connections; RSS after a forced GC at the start and every ${int(TOTAL / CHECKPOINTS)} requests, and without GC every ${SAMPLE_MS} ms under load (peak)`,
    `- **Machine:** ${machine}; this run at nice ${getPriority()}`,
    '',
    `| RSS at start MB (GC) | peak RSS under load MB | RSS at end MB (GC) | RSS end vs first ${int(first.requests)} (GC) | spans dropped at end | spans dropped ${SETTLE_MS / 1000} s later | failed requests (gateway's non-2xx) | flat (≤ ${ratio(MAX_GROWTH)}) |`,
    '|--:|--:|--:|--:|--:|--:|--:|:-:|',
    `| ${mb(start.rssBytes)} | ${mb(peak)} | ${mb(last.afterGc.rssBytes)} | ${ratio(growth)} | ${int(last.dropped)} | ${int(ending.settledDropped)} (RSS ${mb(ending.settled.rssBytes)} MB) | ` +
      `${failures} (${ending.non2xx.size === 0 ? 'none' : [...ending.non2xx].map(([status, n]) => `${n} × ${status}`).join(', ')}) | ${growth <= MAX_GROWTH ? '✓' : '✗'} |`,
    '',
    '| requests | RSS MB (GC) | heap used MB (GC) | spans dropped | req/s (this tenth) | p99 ms | failed |',
    '|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
  return { markdown, passed };
}

async function main(): Promise<void> {
  if (!(Number.isInteger(TOTAL) && TOTAL >= CHECKPOINTS)) throw new Error(`--requests must be an integer ≥ ${CHECKPOINTS}`);
  killChildrenOnExit();
  const machine = describeMachine(loadNow());
  const stack = await startStack(false);
  // Nothing listens here: every export is refused at connect (the collector is down).
  const closedEndpoint = `http://127.0.0.1:${await freePort()}`;
  const target = await startGatewayTarget(stack, 'redis', { name: 'gateway-redis, tracing on, collector down', exposeGc: true, tracingEndpoint: closedEndpoint });
  const channel = target.process!.child;
  const start = await queryStats(channel, true);
  const checkpoints: Checkpoint[] = [];
  let peak = start.rssBytes;
  const step = Math.floor(TOTAL / CHECKPOINTS);
  for (let i = 1; i <= CHECKPOINTS; i++) {
    const amount = i === CHECKPOINTS ? TOTAL - step * (CHECKPOINTS - 1) : step;
    const { result: sample, peak: tenthPeak } = await peakRssDuring(channel, runLoad(target.url, { connections: CONNECTIONS, durationSec: 3600, amount }));
    peak = Math.max(peak, tenthPeak);
    const requests = checkpoints.length === 0 ? amount : checkpoints.at(-1)!.requests + amount;
    checkpoints.push({ requests, afterGc: await queryStats(channel, true), dropped: await droppedSpans(target.url), requestsPerSec: sample.requestsPerSec, p99: sample.p99, failures: sample.failures });
    log(`soak:tracing ${int(requests)} requests: RSS ${mb(checkpoints.at(-1)!.afterGc.rssBytes)} MB after GC, ${int(checkpoints.at(-1)!.dropped)} spans dropped, ${sample.failures} failed`);
  }
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const { dropped: settledDropped, non2xx } = await scrape(target.url);
  const ending: Ending = { settledDropped, settled: await queryStats(channel, true), non2xx };
  const { markdown, passed } = report(machine, closedEndpoint, start, checkpoints, peak, ending);
  process.stdout.write(`\n${markdown}\n`);
  await stopAll();
  if (flags.write === '1') {
    const path = join(repositoryRoot(), 'bench', 'RESULTS.md');
    appendSoakRun(path, markdown);
    log(`soak:tracing: appended this run to ${path}`);
  }
  log(`soak:tracing: ${passed ? 'PASS' : 'FAIL'}`);
  process.exitCode = passed ? 0 : 1;
}

runMain('soak:tracing', main);
