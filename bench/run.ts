import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureBaseline } from './comparisons/baseline-compare.js';
import { measureExportCost } from './comparisons/export-cost.js';
import { startBaselineTargets } from './comparisons/baseline-target.js';
import { killChildrenOnExit, runMain, stopAll } from './processes/children.js';
import { measureCluster } from './comparisons/cluster-compare.js';
import { measureConnectionsSweep } from './comparisons/connections-sweep.js';
import { measureEventsPolling } from './comparisons/events-polling.js';
import { measureLedgerCost } from './comparisons/ledger-cost.js';
import { measureModelLists } from './comparisons/model-lists.js';
import { measureModelRouting } from './comparisons/model-routing.js';
import { measureAlertsCost } from './comparisons/alerts-cost.js';
import { measureTracingCost } from './comparisons/tracing-cost.js';
import { measureStreams } from './load-runs/load.js';
import { log } from './processes/log.js';
import { cpuTimesNow, describeMachine, loadNow, repositoryRoot, stealSince } from './processes/machine.js';
import { measureRounds, warmUp, type Target, type TargetRounds } from './load-runs/measure.js';
import { targetsTable } from './load-runs/performance-targets.js';
import { areasTable, type AreaProfile } from './load-runs/profile-areas.js';
import { cpuPerRequest, medianOf } from './load-runs/figures.js';
import { profileFileOwner, summarizeProfileFile, type CpuProfile } from './load-runs/profile-summary.js';
import { loadTable, redisBreakdownTable, resultsDocument, streamTable } from './load-runs/report.js';
import { readSettings, type Settings } from './load-runs/settings.js';
import { measureSoakRss } from './comparisons/soak-rss.js';
import { soakSectionOf } from './soak/soak-report.js';
import { consoleSectionOf } from './console/results-section.js';
import { directTarget, startGatewayTarget, startProxyTarget, startStack, type Stack } from './load-runs/stack.js';

/**
 * `npm run bench`: Tollgate side by side with what it stands on (SPEC section 10). Flags and
 * environment are listed in bench/load-runs/settings.ts. Markdown tables go to stdout, progress to stderr.
 */

type Tables = Pick<Parameters<typeof resultsDocument>[0], 'loadTable' | 'redisTable' | 'streamTable' | 'targetsTable'>;

/** How the machine stood when the run started: its load, and its CPU times (for the steal over the run). */
interface MachineAtStart {
  readonly load: number;
  readonly cpuTimes: string | undefined;
}

function writeResults(tables: Tables, runSettings: string, atStart: MachineAtStart): void {
  const args = process.argv.slice(2).join(' ');
  const env = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value ?? ''} `)
    .join('');
  const path = join(repositoryRoot(), 'bench', 'RESULTS.md');
  const command = `${env}npm run bench${args ? ` -- ${args}` : ''}`;
  // The console reads (bench/console/console-rows.ts) and the soak runs `npm run soak` appended at the end are kept: this run replaces the rest.
  const previous = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const soakRuns = soakSectionOf(previous);
  const consoleReads = consoleSectionOf(previous);
  const extras = extraSections.join('\n');
  const document = resultsDocument({ machine: describeMachine(atStart.load, stealSince(atStart.cpuTimes)), date: new Date().toISOString(), command, settings: runSettings, ...tables, extras });
  writeFileSync(path, document + (consoleReads === '' ? '' : `\n${consoleReads}`) + soakRuns);
  log(`wrote ${path}`);
}

const print = (heading: string, body: string): void => void process.stdout.write(`\n## ${heading}\n\n${body}\n`);

/** The flag-gated sections of this run, printed as they finish and written to RESULTS.md after the main tables. */
const extraSections: string[] = [];
const printExtra = (heading: string, body: string): void => {
  print(heading, body);
  extraSections.push(`## ${heading}\n\n${body}\n`);
};

/** The flag-gated measurements, each printed as soon as it is done. */
async function measureExtras(stack: Stack, targets: readonly Target[], settings: Settings): Promise<void> {
  const gateways = targets.filter((target) => target.name.startsWith('gateway'));
  if (settings.connectionsSweep) printExtra('Connections sweep: CPU per request at 1, 32 and 256 connections', await measureConnectionsSweep(targets.slice(1), settings));
  if (settings.cluster) printExtra(`Cluster: ${settings.workers} gateway processes sharing one port vs one process`, await measureCluster(stack, gateways, settings));
  // Every run: what `server.workers: 2` gives the Redis deployment on this machine (SPEC 10 "Every core").
  // The bench's own primary (load-runs/target-cluster.ts, which also sums CPU stats) forks the workers:
  // the same node:cluster round-robin as src/cluster/, whose extra work (scrapes, reloads, SQLite
  // changes) is off the request path.
  else printExtra('Workers: gateway-redis ×2 workers (one port, node:cluster) vs ×1 process', await measureCluster(stack, gateways.filter((target) => target.redis !== undefined), { ...settings, workers: 2 }));
  if (settings.soakRss) printExtra('Memory soak: gateway RSS after 20,000 and 200,000 requests (fresh processes)', await measureSoakRss(stack, settings));
  await measureComparisons(stack, targets, settings);
}

/** `--baseline`, `--ledger-cost`, `--model-lists`, `--model-routing`, `--alerts`, `--export`, `--tracing`, `--events`: each in interleaved rounds of its own, with the bare proxy of the main run. */
async function measureComparisons(stack: Stack, targets: readonly Target[], settings: Settings): Promise<void> {
  const proxyAndGateways = targets.filter((target) => target.name === 'proxy' || target.name.startsWith('gateway'));
  const proxy = targets.find((target) => target.name === 'proxy');
  if (!proxy) throw new Error('the comparisons need the main run\'s proxy target');
  const baseline = settings.baseline ? await startBaselineTargets(stack, settings.baseline) : undefined;
  const heading = (what: string): string => `${what} (${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} interleaved rounds, median)`;
  if (baseline) printExtra(heading('Baseline: non-streaming chat, this gateway vs another checkout\'s'), await measureBaseline(stack, proxyAndGateways, baseline, settings));
  if (settings.ledgerCost) printExtra(heading('Ledger cost: gateway-redis with the usage ledger on and off, non-streaming chat'), await measureLedgerCost(stack, proxy, settings));
  if (settings.modelLists) printExtra(heading('Model lists: gateway-redis with allow-lists on its key and team and without, non-streaming chat'), await measureModelLists(stack, proxy, settings));
  if (settings.modelRouting) printExtra(heading('Model routing: gateway-redis with three routes and an alias table (no alias used; an alias on every request) and without, non-streaming chat'), await measureModelRouting(stack, proxy, settings));
  if (settings.alerts) printExtra(heading('Budget alerts: gateway-redis with an event sink and without, budgets never crossed, non-streaming chat'), await measureAlertsCost(stack, proxy, settings));
  if (settings.tracing) printExtra(heading('Tracing cost: gateway-redis with tracing off and on (ratio 1.0), non-streaming chat'), await measureTracingCost(stack, proxy, settings));
  if (settings.export) printExtra(heading('Usage export: gateway-redis with CloudEvents export to a loopback sink on and off, non-streaming chat'), await measureExportCost(stack, proxy, settings));
  if (settings.events) printExtra(heading('Events polling: GET /v1/preview/training-jobs/{id}/events'), await measureEventsPolling(proxyAndGateways, baseline, settings));
  baseline?.close();
}

/** Profiles are written when the gateway processes exit: call after stopAll(). */
function printProfileSummaries(stack: Stack, rows: readonly TargetRounds[]): void {
  if (!stack.profileDir) return;
  const byArea: AreaProfile[] = [];
  for (const file of readdirSync(stack.profileDir).filter((name) => name.endsWith('.cpuprofile'))) {
    const { pid, thread } = profileFileOwner(file);
    const name = stack.processNames.get(pid);
    const where = `${name ?? `cluster worker (pid ${pid})`}${thread === '0' ? '' : ', worker thread'}`;
    printExtra(`CPU profile: ${where}, top self time`, summarizeProfileFile(join(stack.profileDir, file), 20));
    const row = rows.find((r) => r.name === name);
    if (row && thread === '0') byArea.push({ name: row.name, profile: JSON.parse(readFileSync(join(stack.profileDir, file), 'utf8')) as CpuProfile, cpuMicrosPerRequest: medianOf(row, cpuPerRequest) });
  }
  // The proxy first: each gateway's areas read against what the bare proxy spends on the same request.
  byArea.sort((a, b) => rows.findIndex((r) => r.name === a.name) - rows.findIndex((r) => r.name === b.name));
  if (byArea.length > 1) printExtra('CPU per request by area (main-thread profile shares × the run\'s median CPU µs/req; start-up left out)', areasTable(byArea));
  log(`CPU profiles of the gateway processes: ${stack.profileDir}`);
}

function anyFailed(rows: readonly TargetRounds[], streams: readonly { failures: number }[]): boolean {
  return rows.some((row) => row.rounds.some((s) => s.failures > 0)) || streams.some((s) => s.failures > 0);
}

async function main(): Promise<void> {
  killChildrenOnExit();
  const startedAt = performance.now();
  const atStart: MachineAtStart = { load: loadNow(), cpuTimes: cpuTimesNow() };
  const settings = readSettings();
  const stack = await startStack(settings.cpuProf);
  const targets = [directTarget(stack), await startProxyTarget(stack), await startGatewayTarget(stack, 'memory'), await startGatewayTarget(stack, 'redis')];
  const names = targets.map((target) => target.name);
  log(`${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} rounds, targets ${names.join(', ')}`);
  await warmUp(targets, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds(targets, settings);
  log(`streaming: ${settings.streams} sequential requests per target, interleaved`);
  const streams = await measureStreams(targets.map((target) => target.url), settings.streams);

  const targetsCheck = targetsTable(rows, names, streams);
  const tables: Tables = { loadTable: loadTable(rows), redisTable: redisBreakdownTable(rows, 'gateway-redis'), streamTable: streamTable(names, streams), targetsTable: targetsCheck.table };
  const runSettings = `${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} interleaved rounds (median), ${settings.warmup} s warm-up per target, ${settings.settle} s of unmeasured load on a target before each of its runs, ${settings.streams} streaming requests per target`;
  print(`Non-streaming chat (${runSettings})`, tables.loadTable);
  print('Redis commands per gateway-redis request (all rounds; commands run inside Lua scripts count too)', tables.redisTable);
  print('Streaming: time to first chunk', tables.streamTable);
  print(`Targets (${targetsCheck.allMet ? 'all met' : 'not all met'})`, tables.targetsTable);
  const failed = anyFailed(rows, streams);
  if (failed) log('WARNING: some requests failed (see the "failed" column): those rows are not valid measurements');

  await measureExtras(stack, targets, settings);
  stack.redisProbe.close();
  await stopAll();
  printProfileSummaries(stack, rows);
  if (settings.write) writeResults(tables, runSettings, atStart);
  log(`total time ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
  process.exitCode = failed ? 1 : 0;
}

runMain('bench', main);
