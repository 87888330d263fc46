import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './ports.js';

// Where the dashboard and alert expressions come from, and how to make them queryable.
export * from './promql-sources.js';

/** Path of the `prometheus` or `promtool` binary (Debian package `prometheus`), or a clear error. */
export function findBinary(name: 'prometheus' | 'promtool'): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new Error(`${name} not found on PATH: install it with "apt-get install -y prometheus"`);
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs promtool with `args`, feeding `stdin` when given (e.g. `check metrics`). */
export function runPromtool(args: string[], stdin?: string): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(findBinary('promtool'), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** Checks PromQL syntax offline: each expression becomes a recording rule for `promtool check rules`. */
export async function checkPromqlSyntax(exprs: string[]): Promise<CommandResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-promql-'));
  try {
    const rules = exprs.map((expr, i) => ({ record: `tollgate_check:expr_${i}`, expr }));
    const file = join(dir, 'rules.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'syntax', rules }] }));
    return await runPromtool(['check', 'rules', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface QueryResponse {
  status: 'success' | 'error';
  data?: { resultType: string; result: { metric: Record<string, string>; value?: [number, string] }[] };
  errorType?: string;
  error?: string;
}

export interface RuleHealth {
  name: string;
  health: string;
  lastError?: string;
}

export interface StartPrometheusOptions {
  /** host:port of each scrape target. */
  targets: string[];
  scrapeIntervalSeconds?: number;
  /** Absolute paths of rule files to load (evaluated every scrape interval). */
  ruleFiles?: string[];
  metricsPath?: string;
  bearerToken?: string;
  jobName?: string;
}

export interface WaitForScrapeOptions {
  /** A metric that must have samples from every target. */
  metric?: string;
  /** Scrapes each target must have had (2+ lets rate() answer). */
  scrapes?: number;
  timeoutMs?: number;
}

export interface TestPrometheus {
  readonly url: string;
  readonly jobName: string;
  query(expr: string): Promise<QueryResponse>;
  waitForScrape(options?: WaitForScrapeOptions): Promise<void>;
  /** Waits until every loaded rule has been evaluated once, and returns each rule's health. */
  evaluatedRules(timeoutMs?: number): Promise<RuleHealth[]>;
  stop(): Promise<void>;
}

/** Polls `check` until it returns a value; for waiting on an external process (Prometheus scrapes). */
async function poll<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function prometheusConfig(options: StartPrometheusOptions, jobName: string): string {
  const interval = `${options.scrapeIntervalSeconds ?? 1}s`;
  return stringify({
    global: { scrape_interval: interval, evaluation_interval: interval },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: [
      {
        job_name: jobName,
        metrics_path: options.metricsPath ?? '/metrics',
        ...(options.bearerToken ? { authorization: { type: 'Bearer', credentials: options.bearerToken } } : {}),
        static_configs: [{ targets: options.targets }],
      },
    ],
  });
}

/** Starts a private Prometheus on a free loopback port, scraping `targets`. */
export async function startPrometheus(options: StartPrometheusOptions): Promise<TestPrometheus> {
  const jobName = options.jobName ?? 'tollgate';
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, prometheusConfig(options, jobName));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    findBinary('prometheus'),
    [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await poll('prometheus to become ready', 15_000, async () => {
      if (child.exitCode !== null) throw new Error('exited');
      return (await fetch(`${url}/-/ready`)).ok ? true : undefined;
    });
  } catch (error) {
    await stop();
    throw new Error(`prometheus did not start: ${String(error)}\n${log}`);
  }

  const query = async (expr: string): Promise<QueryResponse> => {
    const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    return (await response.json()) as QueryResponse;
  };
  const vector = async (expr: string): Promise<Map<string, number>> => {
    const answer = await query(expr);
    if (answer.status !== 'success') throw new Error(`${expr}: ${answer.error ?? 'failed'}`);
    return new Map((answer.data?.result ?? []).map((r) => [r.metric.instance ?? '', Number(r.value?.[1])]));
  };

  return {
    url,
    jobName,
    query,
    async waitForScrape({ metric, scrapes = 1, timeoutMs = 20_000 } = {}) {
      await poll(`${scrapes} scrape(s) of ${options.targets.join(', ')}`, timeoutMs, async () => {
        const up = await vector(`up{job="${jobName}"}`);
        const count = await vector(`count_over_time(up{job="${jobName}"}[1h])`);
        const ready = options.targets.every((t) => up.get(t) === 1 && (count.get(t) ?? 0) >= scrapes);
        if (!ready) return undefined;
        if (!metric) return true;
        const present = await vector(`count by (instance) (${metric}{job="${jobName}"})`);
        return options.targets.every((t) => (present.get(t) ?? 0) > 0) ? true : undefined;
      });
    },
    async evaluatedRules(timeoutMs = 20_000) {
      return poll('every rule to be evaluated', timeoutMs, async () => {
        const response = await fetch(`${url}/api/v1/rules`);
        const body = (await response.json()) as { data: { groups: { rules: RuleHealth[] }[] } };
        const rules = body.data.groups.flatMap((g) => g.rules);
        return rules.length > 0 && rules.every((r) => r.health !== 'unknown') ? rules : undefined;
      });
    },
    stop,
  };
}

