import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { createGateway } from '../../src/app.js';
import { DAY_MS, utcDay } from '../../src/calendar.js';
import { validateConfig } from '../../src/config/index.js';
import { createGatewayServer } from '../../src/server.js';
import { describeMachine, loadNow, repositoryRoot } from '../processes/machine.js';
import { CONSOLE_HEADING, writeConsoleSection } from './results-section.js';

/**
 * `npx tsx bench/console/console-rows.ts [rows]` (SPEC 17: each console page usable within 1 s
 * with 1,000,000 ledger rows on PostgreSQL). Creates a scratch database on BENCH_PG_URL's server
 * (default the test server, postgres@127.0.0.1:5432), lets a gateway migrate it, loads the rows
 * with generate_series (30 days up to now, 20 teams × 5 projects, 100 keys, 8 models, 2% 429s,
 * 1% 502s) and 10,000 audit entries, then times each console read through HTTP: one warm-up, 5
 * timed runs, median and worst. Writes the "Console reads" section of bench/RESULTS.md; drops the database.
 */

const MAINTENANCE_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROWS = Number(process.argv[2] ?? 1_000_000);
const RUNS = 5;
const ADMIN_KEY = `tg-bench-admin-${randomBytes(12).toString('hex')}`;
const LEAD_KEY = `tg-bench-lead-${randomBytes(12).toString('hex')}`;

async function onServer(url: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

const LEDGER_ROWS = `
insert into ledger (id, request_id, at, team, project, key_id, route, method, status, model,
  prompt_tokens, completion_tokens, total_tokens, cost_nanos, estimated, request_bytes, duration_ms)
select 'row-' || g, 'req-' || g, now() - (g::float8 / $1) * interval '30 days',
  'team-' || lpad((g % 20)::text, 2, '0'), 'p' || ((g / 20) % 5), 'key-' || (g % 100),
  '/v1/chat/completions', 'POST', case when g % 50 = 0 then 429 when g % 97 = 0 then 502 else 200 end,
  'model-' || ((g / 7) % 8), 100 + g % 50, 20 + g % 30, 120 + g % 50 + g % 30, 1000 + (g % 5000) * 37, false, 512, 30 + g % 100
from generate_series(1, $1) g`;

/** The rows were put in behind the gateway's back: sum them per day as its inserts would have (the same statement as migration 6's). */
const DAILY_SUMS = `
insert into ledger_daily (day, team, project, key_id, model, method, route, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
select to_char(at at time zone 'UTC', 'YYYY-MM-DD'), team, project, key_id, model, method, route,
  count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
from ledger group by 1, team, project, key_id, model, method, route`;

const AUDIT_ROWS = `
insert into audit_log (at, actor, actor_role, action, target, result, request_id)
select now() - (g::float8 / 10000) * interval '30 days', 'ops', 'admin', 'key.update', 'key-' || (g % 100), 'ok', 'req-a' || g
from generate_series(1, 10000) g`;

/** Median and worst of RUNS timed GETs (after one untimed), failing on anything but 200. */
async function time(base: string, path: string, key: string): Promise<{ median: number; worst: number; bytes: number }> {
  const once = async (): Promise<{ ms: number; bytes: number }> => {
    const started = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
    return { ms: performance.now() - started, bytes: body.length };
  };
  await once();
  const runs: Array<{ ms: number; bytes: number }> = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once());
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  return { median: sorted[Math.floor(RUNS / 2)]!, worst: sorted.at(-1)!, bytes: runs[0]!.bytes };
}

function endpoints(): Array<{ name: string; path: string; key: string }> {
  const today = utcDay();
  const from = utcDay(Date.now() - 29 * DAY_MS);
  return [
    { name: 'Overview (admin)', path: '/admin/overview', key: ADMIN_KEY },
    { name: 'Overview (team-admin of team-07)', path: '/admin/overview', key: LEAD_KEY },
    { name: 'Usage, 30 days by day (per team and project)', path: `/admin/usage?from=${from}&to=${today}&groupBy=day`, key: ADMIN_KEY },
    { name: 'Usage, 30 days by day, team-07', path: `/admin/usage?from=${from}&to=${today}&groupBy=day&team=team-07`, key: ADMIN_KEY },
    { name: 'Requests, first page (30 days)', path: `/admin/usage/requests?from=${from}&to=${today}`, key: ADMIN_KEY },
    { name: 'Requests, first page filtered by key-42', path: `/admin/usage/requests?from=${from}&to=${today}&key=key-42`, key: ADMIN_KEY },
    { name: 'Requests, first page filtered by team-07/p3', path: `/admin/usage/requests?from=${from}&to=${today}&team=team-07&project=p3`, key: ADMIN_KEY },
    { name: 'Audit, 30 days (10,000 entries)', path: `/admin/audit?from=${from}&to=${today}`, key: ADMIN_KEY },
  ];
}

async function main(): Promise<void> {
  const loadAtStart = loadNow();
  // BENCH_KEEP_DB=<name>: use (and keep) that database, loading it only when it is new.
  const kept = process.env.BENCH_KEEP_DB;
  const name = kept ?? `tollgate_bench_console_${randomBytes(4).toString('hex')}`;
  const url = new URL(MAINTENANCE_URL);
  url.pathname = `/${name}`;
  const fresh = !kept || !(await databaseExists(name));
  if (fresh) await onServer(MAINTENANCE_URL, `create database ${name}`);
  try {
    const config = validateConfig(
      {
        server: { host: '127.0.0.1', port: 0 },
        upstreams: { service: { url: 'http://127.0.0.1:9' }, inference: { url: 'http://127.0.0.1:9' } },
        auth: {
          keys: [],
          admin: {
            keys: [
              { id: 'ops', sha256: sha256(ADMIN_KEY) },
              { id: 'lead', sha256: sha256(LEAD_KEY), role: 'team-admin', team: 'team-07' },
            ],
          },
        },
        database: { url: url.toString() },
        logging: { level: 'silent' },
      },
      'bench config',
    );
    const gateway = await createGateway(config, { logger: pino({ level: 'silent' }) });
    const server = createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      let started = performance.now();
      if (fresh) {
        await onServer(url.toString(), LEDGER_ROWS, [ROWS]);
        await onServer(url.toString(), DAILY_SUMS);
        await onServer(url.toString(), AUDIT_ROWS);
      }
      await onServer(url.toString(), 'vacuum analyze');
      const loadSeconds = (performance.now() - started) / 1000;
      process.stderr.write(`loaded ${ROWS} rows in ${loadSeconds.toFixed(1)} s\n`);
      const lines: string[] = [];
      for (const endpoint of endpoints()) {
        started = performance.now();
        const t = await time(base, endpoint.path, endpoint.key).catch((err: Error) => {
          process.stderr.write(`${endpoint.name}: ${err.message}\n`);
          return { median: NaN, worst: NaN, bytes: 0 };
        });
        process.stderr.write(`${endpoint.name}: median ${t.median.toFixed(0)} ms, worst ${t.worst.toFixed(0)} ms\n`);
        lines.push(`| ${endpoint.name} | \`GET ${endpoint.path.replace(/\d{4}-\d{2}-\d{2}/g, 'D')}\` | ${t.median.toFixed(0)} | ${t.worst.toFixed(0)} | ${t.bytes.toLocaleString('en-US')} |`);
      }
      writeConsoleSection(join(repositoryRoot(), 'bench', 'RESULTS.md'), section(describeMachine(loadAtStart), loadSeconds, lines));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    }
  } finally {
    if (!kept) await onServer(MAINTENANCE_URL, `drop database if exists ${name} with (force)`);
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: MAINTENANCE_URL });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

const sha256 = (key: string): string => createHash('sha256').update(key).digest('hex');

function section(machine: string, loadSeconds: number, lines: readonly string[]): string {
  return [
    CONSOLE_HEADING,
    '',
    `Written by \`npx tsx bench/console/console-rows.ts\` (SPEC 17: each console page usable within 1 s with 1,000,000 ledger rows on PostgreSQL); \`npm run bench\` keeps this section.`,
    '',
    `- **Machine:** ${machine}`,
    `- **Date:** ${new Date().toISOString()}`,
    `- **Data:** ${ROWS.toLocaleString('en-US')} ledger rows over the last 30 days (20 teams × 5 projects, 100 keys, 8 models; 2% 429s, 1% 502s) and 10,000 audit entries, loaded with generate_series in ${loadSeconds.toFixed(0)} s, then VACUUM ANALYZE; PostgreSQL on the same machine`,
    `- **Timing:** wall time of one HTTP GET through the gateway (bearer admin key), one untimed warm-up then ${RUNS} runs; D is a day, the range the last 30 days`,
    '',
    '| read | request | median ms | worst ms | body bytes |',
    '|---|---|--:|--:|--:|',
    ...lines,
    '',
  ].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`console-rows: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
