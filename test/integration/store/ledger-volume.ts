/**
 * Ledger at volume: fills a fresh PostgreSQL database (and, with `--sqlite`, a SQLite file) with
 * 1,000,000 rows over 20 teams and 3 months, then times the admin reads and shows PostgreSQL's
 * plans. Not part of the suite:
 *
 *   node --import tsx test/integration/store/ledger-volume.ts [--sqlite | --sqlite-only] [--keep]
 *
 * `--keep` leaves the PostgreSQL database in place (its name is printed) for further EXPLAINs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { aggregateLedger, type Database, type DurableStore, openDurableStore, postgresDialect, selectLedgerPage, type UsageGroupBy } from '../../../src/store/index.js';
import { createTestDatabase } from '../../helpers/postgres.js';

const ROWS = 1_000_000;
const START = '2025-01-01T00:00:00.000Z';
const SPAN_SECONDS = 90 * 86_400; // January to March
const TEAM = 'team-07';
const MONTH = { from: '2025-02-01', to: '2025-02-28' };
const GROUPS: Array<UsageGroupBy | undefined> = [undefined, 'model', 'key', 'day', 'month', 'route'];

/**
 * One row per n, in time order (as the ledger writer appends them): 20 teams of uneven size,
 * 3 projects each, 5 models, 200 keys, 4 routes. Shared by both databases' fill statements.
 */
const rowSelect = (n: string, at: string): string => `
  'row-' || ${n},
  'req-' || ${n},
  ${at},
  'team-' || lpad(cast(((${n} % 97) * 62 % 97) % 20 as text), 2, '0'),
  'project-' || cast((${n} % 3) as text),
  'key-' || cast(((${n} % 97) * 62 % 97) % 20 * 10 + (${n} % 10) as text),
  (array['/v1/chat/completions', '/v1/preview/models', '/v1/preview/training-jobs', '/v1/models'])[1 + (${n} % 4)],
  case when ${n} % 4 = 3 then 'GET' else 'POST' end,
  200,
  'model-' || cast((${n} % 5) as text),
  ${n} % 1000, ${n} % 300, ${n} % 1000 + ${n} % 300,
  (${n} % 1000) * 50 + (${n} % 300) * 220,
  ${n} % 7 = 0,
  1024 + ${n} % 4096,
  20 + ${n} % 500`;

/** The rows went in behind the store's back: sum them per day as its inserts would have (as migration 6 does). */
const dailySums = (day: string): string => `INSERT INTO ledger_daily (day, team, project, key_id, model, method, route, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
  SELECT ${day}, team, project, key_id, model, method, route, count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
  FROM ledger GROUP BY ${day}, team, project, key_id, model, method, route`;

async function fillPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // a failed query rejects with it too
  await client.connect();
  try {
    const at = `timestamptz '${START}' + (n * ${SPAN_SECONDS / ROWS}) * interval '1 second'`;
    await client.query(`INSERT INTO ledger SELECT ${rowSelect('n', at)} FROM generate_series(1, ${ROWS}) AS n`);
    await client.query(dailySums("to_char(at at time zone 'UTC', 'YYYY-MM-DD')"));
    // As autovacuum would eventually: statistics for the planner, visibility map for index-only scans.
    await client.query('VACUUM ANALYZE ledger');
  } finally {
    await client.end();
  }
}

function fillSqlite(path: string): void {
  const file = new Sqlite(path);
  // SQLite has no arrays: pick the route with a CASE instead.
  const select = rowSelect('n', `strftime('%Y-%m-%dT%H:%M:%fZ', '${START}', '+' || (n * ${SPAN_SECONDS / ROWS}) || ' seconds')`)
    .replace(/\(array\[(.*?)\]\)\[1 \+ \(n % 4\)\]/s, (_, list: string) => {
      const routes = list.split(',').map((r) => r.trim());
      return `case n % 4 ${routes.map((r, i) => `when ${i} then ${r}`).join(' ')} end`;
    })
    .replace(/lpad\(cast\((.*?) as text\), 2, '0'\)/, "substr('0' || cast($1 as text), -2)");
  file.exec(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${ROWS}) INSERT INTO ledger SELECT ${select} FROM g`);
  file.exec(dailySums('substr(at, 1, 10)'));
  file.exec('ANALYZE');
  file.close();
}

/** Median of `runs` timings after one warm-up, in ms. */
async function time(runs: number, work: () => Promise<unknown>): Promise<number> {
  await work();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

/** The cursor `pages` pages into the team's month: a page deep in the range costs what the first does. */
async function cursorAfter(store: DurableStore, pages: number): Promise<string> {
  let after: string | undefined;
  for (let i = 0; i < pages; i++) {
    const page = await store.pageLedger({ ...MONTH, team: TEAM, limit: 1000, ...(after ? { after } : {}) });
    after = page.lastId!;
  }
  return after!;
}

async function timeReads(label: string, store: DurableStore): Promise<void> {
  console.log(`\n${label}: medians of 5 runs after a warm-up`);
  for (const groupBy of GROUPS) {
    const ms = await time(5, () => store.aggregateUsage({ ...MONTH, team: TEAM, ...(groupBy ? { groupBy } : {}) }));
    console.log(`  aggregateUsage one team, one month, groupBy ${groupBy ?? '(none)'}: ${ms.toFixed(1)} ms`);
  }
  const groups = await store.aggregateUsage({ ...MONTH, team: TEAM, groupBy: 'day' });
  console.log(`    (that team-month: ${groups.reduce((sum, g) => sum + g.requests, 0)} rows)`);
  console.log(`  aggregateUsage all teams, one month, groupBy model: ${(await time(5, () => store.aggregateUsage({ ...MONTH, groupBy: 'model' }))).toFixed(1)} ms`);
  console.log(`  aggregateUsage one key, one month: ${(await time(5, () => store.aggregateUsage({ ...MONTH, key: 'key-71' }))).toFixed(1)} ms`);
  console.log(`  pageLedger one team, first page of 1000: ${(await time(5, () => store.pageLedger({ ...MONTH, team: TEAM, limit: 1000 }))).toFixed(1)} ms`);
  const deep = await cursorAfter(store, 10);
  console.log(`  pageLedger one team, 11th page of 1000: ${(await time(5, () => store.pageLedger({ ...MONTH, team: TEAM, limit: 1000, after: deep }))).toFixed(1)} ms`);
  console.log(`  pageLedger all teams, first page of 1000: ${(await time(5, () => store.pageLedger({ ...MONTH, limit: 1000 }))).toFixed(1)} ms`);
}

/** Runs the store's own query code on a Kysely that records the SQL, then EXPLAIN ANALYZEs that SQL. */
async function explainPostgres(url: string): Promise<void> {
  const captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }), log: (event) => void captured.push(event.query) });
  await aggregateLedger(db, postgresDialect, { ...MONTH, team: TEAM, groupBy: 'model' });
  await selectLedgerPage(db, { ...MONTH, team: TEAM, limit: 1000, after: await cursorFromPage(db) });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const query of [captured[0]!, captured.at(-1)!]) {
    const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, [...query.parameters]);
    console.log(`\nEXPLAIN ANALYZE ${query.sql.slice(0, 60).replace(/\s+/g, ' ')}…\n${plan.rows.map((r) => `  ${r['QUERY PLAN']}`).join('\n')}`);
  }
  await client.end();
  await db.destroy();
}

async function cursorFromPage(db: Kysely<Database>): Promise<string> {
  return (await selectLedgerPage(db, { ...MONTH, team: TEAM, limit: 1000 })).lastId!;
}

async function runPostgres(keep: boolean): Promise<void> {
  const database = await createTestDatabase();
  try {
    const store = await openDurableStore({ url: database.url, path: '', timeoutMs: 30_000 });
    let started = performance.now();
    await fillPostgres(database.url);
    console.log(`PostgreSQL: ${ROWS} rows inserted (INSERT … SELECT generate_series) and VACUUM ANALYZE in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const [size] = await database.query<{ table: string; indexes: string }>("SELECT pg_size_pretty(pg_table_size('ledger')) AS table, pg_size_pretty(pg_indexes_size('ledger')) AS indexes");
    console.log(`  ledger size: table ${size?.table}, indexes ${size?.indexes}`);
    await timeReads('PostgreSQL', store);
    await explainPostgres(database.url);
    started = performance.now();
    const deleted = await store.deleteLedgerBefore('2025-01-15T00:00:00.000Z');
    console.log(`\n  deleteLedgerBefore 2025-01-15: ${deleted} rows in ${((performance.now() - started) / 1000).toFixed(2)} s`);
    await store.close();
  } finally {
    if (keep) console.log(`kept database ${database.name}`);
    else await database.drop();
  }
}

/** How long `work` took, and the longest the event loop stood still meanwhile (a 1 ms ticker's largest gap). */
async function blocking(work: () => Promise<unknown>): Promise<string> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  const outcome = await work().then(
    () => 'ok',
    (error: Error) => error.name,
  );
  const took = performance.now() - started;
  clearInterval(ticker);
  longest = Math.max(longest, performance.now() - last);
  return `${took.toFixed(0)} ms (${outcome}), event loop blocked at most ${longest.toFixed(0)} ms`;
}

/** better-sqlite3 is synchronous: beside the durations, how long the event loop was held. */
async function runSqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-volume-'));
  const path = join(dir, 'ledger.db');
  try {
    await (await openDurableStore({ url: '', path })).close();
    const started = performance.now();
    fillSqlite(path);
    console.log(`\nSQLite: ${ROWS} rows inserted (recursive CTE) and ANALYZE in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const store = await openDurableStore({ url: '', path, timeoutMs: 30_000 });
    await timeReads('SQLite', store);
    console.log('\nSQLite, event loop:');
    console.log(`  aggregateUsage one team, one month, groupBy model: ${await blocking(() => store.aggregateUsage({ ...MONTH, team: TEAM, groupBy: 'model' }))}`);
    console.log(`  aggregateUsage all teams, one month, groupBy model: ${await blocking(() => store.aggregateUsage({ ...MONTH, groupBy: 'model' }))}`);
    console.log(`  aggregateUsage all teams, 3 months, groupBy model: ${await blocking(() => store.aggregateUsage({ from: '2025-01-01', to: '2025-03-31', groupBy: 'model' }))}`);
    console.log(`  pageLedger all teams, first page of 1000: ${await blocking(() => store.pageLedger({ ...MONTH, limit: 1000 }))}`);
    console.log(`  deleteLedgerBefore 2025-01-15: ${await blocking(() => store.deleteLedgerBefore('2025-01-15T00:00:00.000Z'))}`);
    await store.close();
    const bounded = await openDurableStore({ url: '', path });
    console.log(`  with the default 2000 ms bound, aggregateUsage all teams, 2.5 months: ${await blocking(() => bounded.aggregateUsage({ from: '2025-01-15', to: '2025-03-31', groupBy: 'model' }))}`);
    await bounded.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = new Set(process.argv.slice(2));
if (!args.has('--sqlite-only')) await runPostgres(args.has('--keep'));
if (args.has('--sqlite') || args.has('--sqlite-only')) await runSqlite();
