/**
 * The console at volume (SPEC 17: every page usable within 1 s at 1,000,000 ledger rows on
 * PostgreSQL): fills a fresh database with 1,000,000 rows over the last 30 days (20 teams, 3
 * projects each, 5 models, 200 keys), starts a gateway on it, and times each page in Chromium
 * from the click on its link to its data on screen. Not part of the suite:
 *
 *   node --import tsx test/browser/console-volume.ts
 *
 * `DB_TIMEOUT_MS=30000` raises `database.timeoutMs` (default 2000) to time reads that take longer;
 * `ROWS=100000` loads fewer rows (a quick look at the request waterfall); `WRITE=1` puts the
 * times in bench/RESULTS.md (the "Pages in Chromium" part of its console section).
 *
 * Times are taken in the page, from the click's event (the user's moment) to the frame in which
 * the data is in the document (a request still on its way shows Loading… somewhere on the page), with the requests made in between (start → end, ms from the
 * click); "driver" is the same span as playwright sees it, its own round trips to the browser
 * included. Sign-in is timed in two parts: opening /console/ until the sign-in form is there
 * (from the navigation's start), and the click on Sign in until Overview's data is on screen
 * (the typing between them is the user's).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService } from '../fixtures/training-service.js';
import { startGateway, testConfig } from '../helpers/gateway.js';
import { KEYS } from '../helpers/keys.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { describeMachine, loadNow, repositoryRoot } from '../../bench/processes/machine.js';
import { PAGES_HEADING, writeConsolePages } from '../../bench/console/results-section.js';
import { buildConsole, launchChromium, Watched } from './console-harness.js';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
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
    // As bench/console/console-rows.ts: the first timings do not share the disk with the load's checkpoint.
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** What is awaited on screen: the sign-in form, or page `heading` with its data (no Loading…, its charts drawn). */
type Ready = { readonly form: true } | { readonly heading: string };

interface InPage {
  /** From the click (or the navigation's start) to the frame with the data in the document. */
  readonly ms: number;
  readonly requests: ReadonlyArray<{ readonly path: string; readonly start: number; readonly end: number }>;
}

/** Run in the page before its scripts: the time of the last click, and room for every request's timing. */
function clickClock(): void {
  addEventListener('click', (event) => Object.assign(window, { clickedAt: event.timeStamp }), true);
  window.performance.setResourceTimingBufferSize(100_000);
}

/** Polled in the page each frame: false until `ready`, then the time since the click (or navigation) and the requests made since. */
function onScreen({ ready, sinceClick }: { ready: Ready; sinceClick: boolean }): InPage | false {
  const there =
    'form' in ready
      ? document.querySelector('form[aria-label="Sign in"] input') !== null
      : document.querySelector('h1')?.textContent === ready.heading &&
        !document.body.innerText.includes('Loading…') &&
        document.querySelectorAll('table, .card, dl').length > 0 &&
        [...document.querySelectorAll('.chart')].every((chart) => chart.querySelector('canvas') !== null);
  if (!there) return false;
  const start = sinceClick ? (window as unknown as { clickedAt: number }).clickedAt : 0;
  const requests = performance
    .getEntriesByType('resource')
    .filter((entry) => entry.startTime >= start)
    .map((entry) => ({
      path: `${new URL(entry.name).pathname}${(entry as PerformanceResourceTiming).transferSize === 0 ? ' (cache)' : ''}`,
      start: entry.startTime - start,
      end: (entry as PerformanceResourceTiming).responseEnd - start,
    }));
  return { ms: window.performance.now() - start, requests };
}

async function waitFor(page: Page, ready: Ready, sinceClick: boolean): Promise<InPage> {
  const handle = await page.waitForFunction(onScreen, { ready, sinceClick }, { polling: 'raf', timeout: 60_000 });
  return (await handle.jsonValue()) as InPage;
}

/** One timed step: what was done, its time in the page, as the driver saw it (null: not a click), and its requests. */
interface Step {
  readonly step: string;
  readonly inPage: InPage;
  readonly driver: number | null;
}

const ms = (n: number): string => String(Math.round(n));
const requestsOf = (timing: InPage): string[] => timing.requests.map((r) => `${r.path} ${ms(r.start)}→${ms(r.end)}`);

function report(step: Step): void {
  const driver = step.driver === null ? '' : ` (driver ${ms(step.driver)} ms)`;
  console.log(`${step.step.padEnd(40)} ${ms(step.inPage.ms).padStart(5)} ms${driver}${requestsOf(step.inPage).map((r) => `\n    ${r}`).join('')}`);
}

function pagesPart(steps: readonly Step[], loadAtStart: number, fillSeconds: number): string {
  return [
    PAGES_HEADING,
    '',
    `Written by \`WRITE=1 node --import tsx test/browser/console-volume.ts\`: ${ROWS.toLocaleString('en-US')} ledger rows over 30 days (20 teams, 3 projects each, 200 keys, 5 models; loaded, summed into ledger_daily, VACUUM ANALYZE and CHECKPOINT in ${fillSeconds.toFixed(0)} s), a gateway on them, Debian Chromium at 1280×800, all on this machine. **In the page**: from the click's event (for sign-in's first part, the navigation's start) to the frame in which the page's data and charts are in the document; **driver**: the same span as playwright sees it, its own round trips to the browser included; **requests**: each request the step made, start→end in ms from the click.`,
    '',
    `- **Machine:** ${describeMachine(loadAtStart)}`,
    `- **Date:** ${new Date().toISOString()}`,
    '',
    '| step | in the page ms | driver ms | requests |',
    '|---|--:|--:|---|',
    ...steps.map((s) => `| ${s.step} | ${ms(s.inPage.ms)} | ${s.driver === null ? '—' : ms(s.driver)} | ${requestsOf(s.inPage).join('<br>') || '—'} |`),
    '',
  ].join('\n');
}

/** A click on the page's link until its data is on screen: in the page, and as the driver sees it. */
async function timePage(page: Page, name: string): Promise<{ inPage: InPage; driver: number }> {
  const started = performance.now();
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  const inPage = await waitFor(page, { heading: name }, true);
  return { inPage, driver: performance.now() - started };
}

const database = await createTestDatabase();
const [service, inference, consoleDir, browser] = await Promise.all([startTrainingService(), startInferenceHost(), buildConsole(), launchChromium()]);
try {
  const gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url, ...(process.env.DB_TIMEOUT_MS ? { timeoutMs: Number(process.env.DB_TIMEOUT_MS) } : {}) } }), undefined, { consoleDir });
  const loadAtStart = loadNow();
  let started = performance.now();
  await fill(database.url);
  const fillSeconds = (performance.now() - started) / 1000;
  console.log(`filled ${ROWS} ledger rows in ${fillSeconds.toFixed(1)} s`);
  // Requests are not routed through this process (each would wait for a round trip here): off-host ones are recorded, not refused.
  const watched = await Watched.open(browser, {}, { refuseOffHost: false });
  const page = await watched.newPage();
  await page.addInitScript(clickClock);
  await page.goto(`${gw.url}/console/`);
  const steps: Step[] = [{ step: 'Sign-in: open /console/ until the form is there', inPage: await waitFor(page, { form: true }, false), driver: null }];
  await page.getByLabel('Admin key').fill(KEYS.admin);
  started = performance.now();
  await page.getByRole('button', { name: 'Sign in' }).click();
  const signedIn = await waitFor(page, { heading: 'Overview' }, true).catch(async (err: unknown) => {
    console.log(watched.problems, await page.locator('body').innerText());
    throw err;
  });
  steps.push({ step: 'Sign-in: the click on Sign in until Overview on screen', inPage: signedIn, driver: performance.now() - started });
  for (const round of ['first visit', 'second visit']) {
    for (const name of [...PAGES.slice(1), PAGES[0]]) steps.push({ step: `${name}, ${round}`, ...(await timePage(page, name)) });
  }
  steps.forEach(report);
  console.log(`this month on Overview: ${await page.getByRole('region', { name: 'This month' }).getByTestId('This month-requests').textContent()} requests`);
  if (process.env.WRITE === '1') writeConsolePages(join(repositoryRoot(), 'bench', 'RESULTS.md'), pagesPart(steps, loadAtStart, fillSeconds));
  if (watched.problems.length > 0) console.log('problems:', watched.problems);
  await gw.close();
} finally {
  await browser.close();
  await Promise.all([service.close(), inference.close()]);
  await database.drop();
}
