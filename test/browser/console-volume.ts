/**
 * The console at volume (SPEC 17: every page usable within 1 s at 1,000,000 ledger rows on
 * PostgreSQL): fills a fresh database with 1,000,000 rows over the last 30 days (20 teams, 3
 * projects each, 5 models, 200 keys), starts a gateway on it, and times each page in Chromium
 * from the click on its link to its data on screen. Not part of the suite:
 *
 *   node --import tsx test/browser/console-volume.ts
 *
 * `DB_TIMEOUT_MS=30000` raises `database.timeoutMs` (default 2000) to time reads that take longer.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService } from '../fixtures/training-service.js';
import { startGateway, testConfig } from '../helpers/gateway.js';
import { KEYS } from '../helpers/keys.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { buildConsole, launchChromium, Watched } from './console-harness.js';

const ROWS = 1_000_000;
const SPAN_SECONDS = 30 * 86_400;
const PAGES = ['Overview', 'Teams', 'Keys', 'Usage', 'Requests', 'Audit', 'Resources', 'Settings'] as const;

async function fill(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const at = `now() - interval '${SPAN_SECONDS} seconds' + (n * ${SPAN_SECONDS / ROWS}) * interval '1 second'`;
    await client.query(`INSERT INTO ledger SELECT
      'row-' || n, 'req-' || n, ${at},
      'team-' || lpad(cast(((n % 97) * 62 % 97) % 20 as text), 2, '0'),
      'project-' || cast((n % 3) as text),
      'key-' || cast(((n % 97) * 62 % 97) % 20 * 10 + (n % 10) as text),
      '/v1/chat/completions', 'POST', case when n % 50 = 0 then 429 else 200 end,
      'model-' || cast((n % 5) as text),
      n % 1000, n % 300, n % 1000 + n % 300, (n % 1000) * 50 + (n % 300) * 220,
      n % 7 = 0, 1024 + n % 4096, 20 + n % 500
      FROM generate_series(1, ${ROWS}) AS n`);
    // The per-day sums the usage reads use, as the ledger writer keeps them beside its rows.
    await client.query(`INSERT INTO ledger_daily (day, team, project, key_id, model, method, route, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
      SELECT to_char(at at time zone 'UTC', 'YYYY-MM-DD'), team, project, key_id, model, method, route,
        count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
      FROM ledger GROUP BY 1, team, project, key_id, model, method, route`);
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

/** From the click on the page's link until nothing on it says Loading… (its API answers are on screen). */
async function timePage(page: Page, name: string): Promise<number> {
  const started = performance.now();
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
  await page.waitForFunction(() => !document.body.innerText.includes('Loading…') && document.querySelectorAll('table, .card, dl').length > 0, undefined, { polling: 'raf', timeout: 60_000 });
  return performance.now() - started;
}

const database = await createTestDatabase();
const [service, inference, consoleDir, browser] = await Promise.all([startTrainingService(), startInferenceHost(), buildConsole(), launchChromium()]);
try {
  const gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url, ...(process.env.DB_TIMEOUT_MS ? { timeoutMs: Number(process.env.DB_TIMEOUT_MS) } : {}) } }), undefined, { consoleDir });
  let started = performance.now();
  await fill(database.url);
  console.log(`filled ${ROWS} ledger rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const watched = await Watched.open(browser);
  const page = await watched.newPage();
  started = performance.now();
  await page.goto(`${gw.url}/console/`);
  await page.getByLabel('Admin key').fill(KEYS.admin);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.card').length > 0, undefined, { timeout: 60_000 }).catch(async (err: unknown) => {
    console.log(watched.problems, await page.locator('body').innerText());
    throw err;
  });
  console.log(`sign-in to Overview on screen: ${Math.round(performance.now() - started)} ms (this month: ${await page.getByRole('region', { name: 'This month' }).getByTestId('This month-requests').textContent()} requests)`);
  for (const round of ['first visit', 'second visit']) {
    for (const name of [...PAGES.slice(1), PAGES[0]]) console.log(`${round.padEnd(13)} ${name.padEnd(10)} ${Math.round(await timePage(page, name))} ms`);
  }
  if (watched.problems.length > 0) console.log('problems:', watched.problems);
  await gw.close();
} finally {
  await browser.close();
  await Promise.all([service.close(), inference.close()]);
  await database.drop();
}
