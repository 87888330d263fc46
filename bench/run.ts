import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { killChildrenOnExit, startChild, startRedis, stopAll, wasInterrupted, type RunningChild } from './children.js';
import { measureStreams, runLoad, type LoadOptions } from './load.js';
import { loadTable, resultsDocument, streamTable, type TargetRounds } from './report.js';

/**
 * `npm run bench`: Tollgate side by side with what it stands on (SPEC section 10). Options, as
 * flags or environment (flags win): --duration/BENCH_DURATION seconds per run (5),
 * --connections/BENCH_CONNECTIONS (32), --rounds/BENCH_ROUNDS (3), --warmup/BENCH_WARMUP seconds
 * (2), --streams/BENCH_STREAMS streaming requests per target (200), --write/BENCH_WRITE (1: write
 * bench/RESULTS.md; default only for a run with default settings), --cpu-prof/BENCH_CPU_PROF
 * (1: write V8 CPU profiles of the gateway processes to a temp directory).
 */

const DEFAULTS = { duration: 5, connections: 32, rounds: 3, warmup: 2, streams: 200 } as const;
type Numeric = keyof typeof DEFAULTS;

interface Settings extends Record<Numeric, number> {
  readonly write: boolean;
  readonly cpuProf: boolean;
  readonly isDefault: boolean;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      streams: { type: 'string' },
      write: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
    },
  });
  const numbers = {} as Record<Numeric, number>;
  for (const name of Object.keys(DEFAULTS) as Numeric[]) {
    const raw = values[name] ?? process.env[`BENCH_${name.toUpperCase()}`];
    const value = raw === undefined || raw === '' ? DEFAULTS[name] : Number(raw);
    if (!Number.isFinite(value) || value < (name === 'warmup' ? 0 : 1)) throw new Error(`bench: ${name} must be a positive number, got "${raw ?? ''}"`);
    numbers[name] = value;
  }
  const isDefault = (Object.keys(DEFAULTS) as Numeric[]).every((name) => numbers[name] === DEFAULTS[name]);
  const write = values.write ?? process.env.BENCH_WRITE;
  const cpuProf = values['cpu-prof'] === true || process.env.BENCH_CPU_PROF === '1';
  return { ...numbers, write: write === undefined || write === '' ? isDefault && !cpuProf : write === '1', cpuProf, isDefault };
}

/** `loadAtStart`: other work on the machine skews absolute numbers; the ratios share it. */
function describeMachine(loadAtStart: number): string {
  let cores = String(availableParallelism());
  try {
    cores = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // nproc is missing on some systems: Node's own count is the same number.
  }
  return `${cores} cores (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${platform()} ${release()}; 1-minute load average ${loadAtStart.toFixed(2)} when the run started`;
}

function repositoryRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

async function startTargets(settings: Settings): Promise<{ names: string[]; urls: string[]; profileDir: string | undefined }> {
  const upstream = await startChild('upstream', 'upstream', [], {});
  const redis = await startRedis();
  const env = { BENCH_UPSTREAM_URL: upstream.url };
  const profileDir = settings.cpuProf ? mkdtempSync(join(tmpdir(), 'tollgate-bench-prof-')) : undefined;
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const targets: RunningChild[] = [
    await startChild('proxy', 'target', ['proxy'], env),
    await startChild('gateway-memory', 'target', ['gateway'], env, profile),
    await startChild('gateway-redis', 'target', ['gateway'], { ...env, BENCH_REDIS_URL: redis.url }, profile),
  ];
  return { names: ['direct', ...targets.map((t) => t.name)], urls: [upstream.url, ...targets.map((t) => t.url)], profileDir };
}

const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

/** Warm-up, then `rounds` rounds over every target, the first target rotated each round. */
async function measureLoad(names: readonly string[], urls: readonly string[], settings: Settings): Promise<TargetRounds[]> {
  const load: LoadOptions = { connections: settings.connections, durationSec: settings.duration };
  if (settings.warmup > 0) {
    for (let t = 0; t < urls.length; t++) {
      log(`warm-up ${names[t]!}`);
      await runLoad(urls[t]!, { ...load, durationSec: settings.warmup });
    }
  }
  const rows: TargetRounds[] = names.map((name) => ({ name, rounds: [] }));
  for (let round = 0; round < settings.rounds; round++) {
    // Rotating the first target cancels any effect of position within a round.
    for (let k = 0; k < urls.length; k++) {
      const t = (round + k) % urls.length;
      const sample = await runLoad(urls[t]!, load);
      rows[t]!.rounds[round] = sample;
      log(`round ${round + 1}/${settings.rounds} ${names[t]!}: ${Math.round(sample.requestsPerSec)} req/s, p50 ${sample.p50.toFixed(2)} ms, failed ${sample.failures}`);
    }
  }
  return rows;
}

function writeResults(tables: { loadTable: string; streamTable: string }, runSettings: string, loadAtStart: number): void {
  const args = process.argv.slice(2).join(' ');
  const env = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value ?? ''} `)
    .join('');
  const path = join(repositoryRoot(), 'bench', 'RESULTS.md');
  const command = `${env}npm run bench${args ? ` -- ${args}` : ''}`;
  writeFileSync(path, resultsDocument({ machine: describeMachine(loadAtStart), date: new Date().toISOString(), command, settings: runSettings, ...tables }));
  log(`wrote ${path}`);
}

async function main(): Promise<void> {
  killChildrenOnExit();
  const loadAtStart = loadavg()[0] ?? 0;
  const settings = readSettings();
  const { names, urls, profileDir } = await startTargets(settings);
  log(`${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} rounds, targets ${names.join(', ')}`);
  const rows = await measureLoad(names, urls, settings);
  log(`streaming: ${settings.streams} sequential requests per target, interleaved`);
  const streams = await measureStreams(urls, settings.streams);
  await stopAll();

  const tables = { loadTable: loadTable(rows), streamTable: streamTable(names, streams) };
  const runSettings = `${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} interleaved rounds (median), ${settings.warmup} s warm-up per target, ${settings.streams} streaming requests per target`;
  process.stdout.write(`\n## Non-streaming chat (${runSettings})\n\n${tables.loadTable}\n\n## Streaming: time to first chunk\n\n${tables.streamTable}\n`);
  const failed = rows.some((row) => row.rounds.some((s) => s.failures > 0)) || streams.some((s) => s.failures > 0);
  if (failed) log('WARNING: some requests failed (see the "failed" column): those rows are not valid measurements');
  if (profileDir) log(`CPU profiles of the gateway processes: ${profileDir}`);
  if (settings.write) writeResults(tables, runSettings, loadAtStart);
  process.exitCode = failed ? 1 : 0;
}

main().catch(async (err: unknown) => {
  if (wasInterrupted()) return;
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
