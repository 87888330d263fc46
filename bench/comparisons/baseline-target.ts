import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { moduleUrl, runsFromSources, startProcess, startRedis } from '../processes/children.js';
import { log } from '../processes/log.js';
import { checkAccepted, type Target } from '../load-runs/measure.js';
import { RedisProbe } from '../processes/redis-stats.js';
import { targetEnv, type Stack, type Store } from '../load-runs/stack.js';
import { CHAT_REQUEST, REQUEST_HEADERS } from '../load-runs/workload.js';

/**
 * Another checkout of this repository as a benchmark target (`--baseline <dir>`): the gateway of
 * its own bench target, started in its directory (its node_modules, its src/), with the
 * environment every target gets (BENCH_UPSTREAM_URL, BENCH_REDIS_URL), against this run's fake
 * upstream. Its target announces its port over the IPC channel as ours do; CPU time is read
 * through baseline-probe.ts, preloaded, since an older target does not answer stats requests.
 */

export interface BaselineCheckout {
  readonly dir: string;
  /** Its commit, for captions: `665e24f`, `665e24f + uncommitted changes`, or `not a git checkout`. */
  readonly revision: string;
  /** What is forked: its compiled dist/<bench dir>/target.js when no source is newer, else <bench dir>/target.ts through tsx. */
  readonly entry: string;
  readonly execArgv: string[];
  /** The request headers of its bench workload (its key and project header): what its target accepts. */
  readonly headers: Readonly<Record<string, string>>;
  /** Features of our gateway target its bench target does not configure (read from its source), for captions. */
  readonly missingFeatures: readonly string[];
}

export interface BaselineTargets {
  readonly checkout: BaselineCheckout;
  /** baseline-memory and baseline-redis, each already shown to accept the chat request. */
  readonly targets: readonly Target[];
  /** Closes the Redis probe (the processes stop with every other child). */
  close(): void;
}

// Our probe is .ts when this run itself goes through tsx: the child then needs tsx too.
const PROBE = moduleUrl(import.meta.dirname, 'baseline-probe');

/** Where a checkout keeps its bench target and workload: bench/load-runs/ since the bench was split into rooms, bench/ before. */
const BENCH_DIRS = [join('bench', 'load-runs'), 'bench'] as const;

function benchDirOf(dir: string): string {
  return BENCH_DIRS.find((sub) => existsSync(join(dir, sub, 'target.ts')) || existsSync(join(dir, 'dist', sub, 'target.js'))) ?? 'bench';
}

function newestFileTime(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

function revisionOf(dir: string): string {
  const git = (...args: string[]): string => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const revision = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? revision : `${revision} + uncommitted changes`;
  } catch {
    return 'not a git checkout';
  }
}

const isHeaders = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && Object.values(value).every((field) => typeof field === 'string');

/** REQUEST_HEADERS of the checkout's own bench workload, read in a child in its directory; undefined when it has none. */
function workloadHeaders(dir: string, benchDir: string, compiled: boolean): Record<string, string> | undefined {
  const module = compiled ? join(dir, 'dist', benchDir, 'workload.js') : join(dir, benchDir, 'workload.ts');
  if (!existsSync(module)) return undefined;
  const script = `const m = await import(${JSON.stringify(pathToFileURL(module).href)}); process.stdout.write(JSON.stringify(m.REQUEST_HEADERS ?? null));`;
  try {
    const output = execFileSync(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const headers: unknown = JSON.parse(output);
    return isHeaders(headers) ? headers : undefined;
  } catch (err) {
    log(`baseline: could not read ${module} (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
    return undefined;
  }
}

/** What load-runs/target.ts configures for gateway-*, and how its config reads in a target's source when it does. */
const FEATURES: readonly { readonly name: string; readonly configured: RegExp }[] = [
  { name: 'usage ledger (database)', configured: /\bdatabase\s*:/ },
  { name: 'ownership checks', configured: /\bownership\s*:/ },
  { name: 'prices', configured: /\bprices\s*:/ },
  { name: 'cost budgets', configured: /\bcostPer(?:Day|Month)\b/ },
  // `level: 'info'`, or (since the `--baseline` like-for-like rows) `level: all ? 'info' : 'silent'`.
  { name: 'request log line at info', configured: /level\s*:[^,}\n]*'info'/ },
];

/** Our features its bench target and workload leave out, by their config keys in its source (or compiled) text. */
function missingFeaturesOf(dir: string, benchDir: string, compiled: boolean): string[] {
  const text = ['target', 'workload']
    .map((name) => (compiled ? join(dir, 'dist', benchDir, `${name}.js`) : join(dir, benchDir, `${name}.ts`)))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
  return FEATURES.filter((feature) => !feature.configured.test(text)).map((feature) => feature.name);
}

const sameHeaders = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** How to start the checkout in `dir`, and what its target expects; throws when `dir` holds no bench target. */
export function inspectCheckout(dir: string): BaselineCheckout {
  const benchDir = benchDirOf(dir);
  const compiledEntry = join(dir, 'dist', benchDir, 'target.js');
  const sourceEntry = join(dir, benchDir, 'target.ts');
  if (!existsSync(join(dir, 'node_modules'))) throw new Error(`--baseline ${dir}: no node_modules (run npm ci there first)`);
  // A stale dist would measure other code than the checkout's sources: tsx then compiles them as it loads.
  const compiled = existsSync(compiledEntry) && statSync(compiledEntry).mtimeMs >= Math.max(newestFileTime(join(dir, 'src')), newestFileTime(join(dir, 'bench')));
  if (!compiled && !existsSync(sourceEntry)) throw new Error(`--baseline ${dir}: neither dist/${benchDir}/target.js nor ${benchDir}/target.ts`);
  const entry = compiled ? compiledEntry : sourceEntry;
  const needsTsx = !compiled || runsFromSources;
  const theirs = workloadHeaders(dir, benchDir, compiled);
  const headers = theirs ?? REQUEST_HEADERS;
  const revision = revisionOf(dir);
  log(`baseline: ${dir} (${revision}), ${compiled ? `its compiled dist/${benchDir}/target.js` : `${benchDir}/target.ts through tsx`}`);
  if (!theirs) log(`baseline: its ${benchDir}/workload has no REQUEST_HEADERS: sending it ours`);
  else if (!sameHeaders(theirs, REQUEST_HEADERS)) log(`baseline: its request headers differ from ours: sending it its own (${Object.keys(theirs).join(', ')})`);
  const missingFeatures = missingFeaturesOf(dir, benchDir, compiled);
  return { dir, revision, entry, execArgv: [...(needsTsx ? ['--import', 'tsx'] : []), '--import', PROBE], headers, missingFeatures };
}

async function startBaselineTarget(stack: Stack, checkout: BaselineCheckout, store: Store): Promise<{ target: Target; probe?: RedisProbe }> {
  const name = `baseline-${store}`;
  // A redis-server of its own: its keys share our key prefix, laid out another way, and its Redis costs stay its own.
  const redis = store === 'redis' ? await startRedis() : undefined;
  const probe = redis ? new RedisProbe(redis.url) : undefined;
  const child = await startProcess(name, checkout.entry, ['gateway'], { env: targetEnv(stack, redis?.url ?? '', 1), execArgv: checkout.execArgv, cwd: checkout.dir });
  const target: Target = { name, url: child.url, process: child, request: { ...CHAT_REQUEST, headers: checkout.headers }, ...(probe ? { redis: probe } : {}) };
  return { target, ...(probe ? { probe } : {}) };
}

/** Starts baseline-memory and baseline-redis from the checkout in `dir`. */
export async function startBaselineTargets(stack: Stack, dir: string): Promise<BaselineTargets> {
  const checkout = inspectCheckout(dir);
  const started = [await startBaselineTarget(stack, checkout, 'memory'), await startBaselineTarget(stack, checkout, 'redis')];
  await checkAccepted(started.map((s) => s.target));
  return {
    checkout,
    targets: started.map((s) => s.target),
    close: () => started.forEach((s) => s.probe?.close()),
  };
}
