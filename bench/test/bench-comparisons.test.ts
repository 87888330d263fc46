import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectCheckout } from '../comparisons/baseline-target.js';
import type { RunSample, TargetRounds } from '../load-runs/measure.js';
import { pairTable, signedMicros, versusProxyTable } from '../load-runs/report.js';
import { readSettings } from '../load-runs/settings.js';
import { REQUEST_HEADERS } from '../load-runs/workload.js';

const sample = (requestsPerSec: number, p99: number, cpuMicrosPerRequest: number): RunSample => ({
  requestsPerSec,
  p50: p99 / 2,
  p99,
  requests: requestsPerSec * 5,
  failures: 0,
  cpuMicros: cpuMicrosPerRequest * requestsPerSec * 5,
  redis: undefined,
});

const row = (name: string, rounds: RunSample[]): TargetRounds => ({ name, rounds });

describe('bench comparison flags', () => {
  it('leaves the default run as it was: no comparison, and RESULTS.md written', () => {
    const settings = readSettings([]);
    expect(settings).toMatchObject({ baseline: undefined, ledgerCost: false, events: false, tracing: false, rate: 0, sideBySide: false, settle: 2, write: true });
  });

  it('takes --settle seconds of unmeasured load before each measured run, 0 for none; a changed value is not the default run', () => {
    expect(readSettings(['--settle', '0'])).toMatchObject({ settle: 0, write: false });
    expect(readSettings(['--settle', '5']).settle).toBe(5);
    expect(() => readSettings(['--settle=-1'])).toThrow('bench: settle must be a number ≥ 0, got "-1"');
  });

  it('takes --baseline as an absolute directory and, like every extra, stops RESULTS.md being written by default', () => {
    const settings = readSettings(['--baseline', 'some/checkout', '--ledger-cost', '--events']);
    expect(settings).toMatchObject({ baseline: resolve('some/checkout'), ledgerCost: true, events: true, write: false });
    expect(readSettings(['--events']).write).toBe(false);
    expect(readSettings(['--tracing'])).toMatchObject({ tracing: true, write: false });
    expect(readSettings(['--rate', '600'])).toMatchObject({ rate: 600, write: false });
    expect(readSettings(['--side-by-side'])).toMatchObject({ sideBySide: true, write: false });
  });

  it('refuses a fixed rate that is not a number', () => {
    expect(() => readSettings(['--rate', 'fast'])).toThrow('bench: rate must be a number ≥ 0, got "fast"');
  });
});

describe('comparison tables', () => {
  it('writes a difference in µs with its sign, and a dash where there is none', () => {
    expect([12.34, -4, 0, Number.NaN, Number.POSITIVE_INFINITY].map(signedMicros)).toEqual(['+12.3', '-4.0', '+0.0', '—', '—']);
  });

  const rows = [
    row('proxy', [sample(4000, 10, 200), sample(2000, 20, 220)]),
    row('gateway-redis', [sample(3000, 15, 300), sample(1000, 30, 320)]),
    row('baseline-redis', [sample(2000, 30, 400), sample(1000, 60, 420)]),
  ];

  it('holds every row to the proxy of the same round, then takes the median', () => {
    const line = versusProxyTable(rows).split('\n').find((text) => text.startsWith('| gateway-redis '));
    // req/s vs proxy: 0.75 and 0.50 in the two rounds (median 0.625); p99 vs proxy: 1.5 in both; CPU: median of 300 and 320.
    expect(line).toContain('| 0.63× | 1.50× | 310.0 |');
  });

  it('sets a gateway row against its baseline round by round: ratios, their spread, and the CPU difference', () => {
    const table = pairTable(rows, [{ label: 'redis', row: 'gateway-redis', base: 'baseline-redis' }], { label: 'store', row: 'gateway', base: 'baseline' });
    expect(table).toContain('| store | req/s gateway ÷ baseline | p99 gateway ÷ baseline | CPU µs/req gateway − baseline |');
    expect(table).toContain('| redis | 1.25× | 0.50× | -100.0 | 0.76× | 1.50 / 1.00 |');
  });

  it('leaves out a pairing whose rows were not measured', () => {
    const table = pairTable(rows, [{ label: 'memory', row: 'gateway-memory', base: 'baseline-memory' }], { label: 'store', row: 'gateway', base: 'baseline' });
    expect(table.split('\n')).toHaveLength(2);
  });
});

describe('another checkout as a baseline target', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A checkout whose target and workload sit in `benchDir`: bench/ before the bench was split into rooms, bench/load-runs/ since. */
  const checkout = (target: string, workload: string, benchDir = 'bench'): string => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-baseline-'));
    mkdirSync(join(dir, benchDir), { recursive: true });
    mkdirSync(join(dir, 'src'));
    // Its own dependencies: tsx, to read its workload, comes from ours.
    symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, benchDir, 'target.ts'), target);
    writeFileSync(join(dir, benchDir, 'workload.ts'), workload);
    return dir;
  };

  it('sends an older target the headers its own workload declares, and names the features it lacks', () => {
    const path = checkout(
      "const config = { ownership: { mode: 'on' }, logging: { level: 'silent' } };",
      "export const REQUEST_HEADERS = { authorization: 'Bearer tg-old-key', 'openai-project': 'old-team/p', 'content-type': 'application/json' };",
    );
    const found = inspectCheckout(path);
    expect(found.headers).toEqual({ authorization: 'Bearer tg-old-key', 'openai-project': 'old-team/p', 'content-type': 'application/json' });
    expect(found.entry).toBe(join(path, 'bench', 'target.ts'));
    expect(found.execArgv.slice(0, 2)).toEqual(['--import', 'tsx']);
    expect(found.missingFeatures).toEqual(['usage ledger (database)', 'prices', 'cost budgets', 'request log line at info']);
  });

  it('runs its compiled target when it is newer than every source, and falls back to our headers when its workload has none', () => {
    const path = checkout('', 'export const CHAT_PATH = "/v1/chat/completions";');
    mkdirSync(join(path, 'dist', 'bench'), { recursive: true });
    writeFileSync(join(path, 'dist', 'bench', 'target.js'), "const config = { database: {}, ownership: {}, prices: {}, costPerDay: 1, level: 'info' };");
    writeFileSync(join(path, 'dist', 'bench', 'workload.js'), 'export const CHAT_PATH = "/v1/chat/completions";');
    const past = new Date(Date.now() - 60_000);
    for (const source of ['target.ts', 'workload.ts']) utimesSync(join(path, 'bench', source), past, past);
    const found = inspectCheckout(path);
    expect(found.entry).toBe(join(path, 'dist', 'bench', 'target.js'));
    expect(found.headers).toEqual(REQUEST_HEADERS);
    expect(found.missingFeatures).toEqual([]);
  });

  it('counts a log level chosen by a condition (`level: all ? \'info\' : \'silent\'`) as the request log at info', () => {
    const path = checkout(
      "const config = { database: {}, ownership: {}, prices: {}, costPerDay: 1, logging: { level: all ? 'info' : 'silent' } };",
      'export const CHAT_PATH = "/v1/chat/completions";',
    );
    expect(inspectCheckout(path).missingFeatures).toEqual([]);
  });

  it('finds the target of a checkout whose bench is split into rooms (bench/load-runs/), compiled or not', () => {
    const path = checkout("const config = { ownership: { mode: 'on' } };", "export const REQUEST_HEADERS = { authorization: 'Bearer tg-new-key' };", join('bench', 'load-runs'));
    const fromSources = inspectCheckout(path);
    expect(fromSources.entry).toBe(join(path, 'bench', 'load-runs', 'target.ts'));
    expect(fromSources.headers).toEqual({ authorization: 'Bearer tg-new-key' });
    expect(fromSources.missingFeatures).toEqual(['usage ledger (database)', 'prices', 'cost budgets', 'request log line at info']);
    mkdirSync(join(path, 'dist', 'bench', 'load-runs'), { recursive: true });
    writeFileSync(join(path, 'dist', 'bench', 'load-runs', 'target.js'), "const config = { database: {}, ownership: {}, prices: {}, costPerDay: 1, level: 'info' };");
    const past = new Date(Date.now() - 60_000);
    for (const source of ['target.ts', 'workload.ts']) utimesSync(join(path, 'bench', 'load-runs', source), past, past);
    const compiled = inspectCheckout(path);
    expect(compiled.entry).toBe(join(path, 'dist', 'bench', 'load-runs', 'target.js'));
    expect(compiled.missingFeatures).toEqual([]);
  });
});
