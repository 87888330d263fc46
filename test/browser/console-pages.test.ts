import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCost, formatCount, formatTime } from '../../console/src/ui/format.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { bearer, KEYS } from '../helpers/keys.js';
import { buildConsole, launchChromium, signIn, startConsoleStack, visit, Watched, type ConsoleStack } from './console-harness.js';

/**
 * What SPEC 17 asks of single pages beyond the admin's journey (console.test.ts): paging and one
 * row's details on Requests, older entries on Audit, the last hour's shares on Overview, group-by
 * on Usage, budget bars on Teams, a revoke with the keyboard alone, and dark colours.
 */
const TODAY = new Date().toISOString().slice(0, 10);
const MONTH_START = `${TODAY.slice(0, 8)}01`;
const WEEK_START = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
/** Requests of team-a's bot: one page of 50 and 2 more, with the limited key's 2 and the failed one 55 rows, so page 2 has 5. */
const BOT_REQUESTS = 52;
/** Entries beyond the 200 the Audit page draws at first. */
const AUDIT_WRITES = 230;

let browser: Browser;
let consoleDir: string;
beforeAll(async () => {
  [consoleDir, browser] = await Promise.all([buildConsole(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
});

describe('the console in Chromium, page by page (SPEC 17)', () => {
  let stack: ConsoleStack;
  let gw: RunningGateway;
  let watched: Watched;
  let page: Page;
  /** A key of team-a limited to 1 request a minute: its second request is a 429. */
  let limited: { id: string; key: string };

  const api = (path: string) => request(gw.url).get(path).set('authorization', bearer(KEYS.admin));
  const cells = (row: ReturnType<Page['locator']>) => row.locator('td').allTextContents();

  beforeAll(async () => {
    stack = await startConsoleStack(consoleDir);
    gw = stack.gw;
    const made = await request(gw.url).post('/admin/keys').set('authorization', bearer(KEYS.admin)).send({ team: 'team-a', projects: ['*'], limits: { rpm: 1 } });
    expect(made.status).toBe(201);
    limited = { id: made.body.id, key: made.body.key };
    const bot: number[] = [];
    for (let i = 0; i < BOT_REQUESTS; i += 13) bot.push(...(await Promise.all(Array.from({ length: Math.min(13, BOT_REQUESTS - i) }, () => stack.chat(KEYS.teamA)))).map((res) => res.status));
    expect(bot).toEqual(Array.from({ length: BOT_REQUESTS }, () => 200));
    expect([(await stack.chat(limited.key)).status, (await stack.chat(limited.key)).status]).toEqual([200, 429]);
    expect((await stack.chat(KEYS.teamB).set('x-fixture-mode', 'error-500')).status).toBeGreaterThanOrEqual(500);
    for (let i = 0; i < AUDIT_WRITES; i += 23) {
      const writes = Array.from({ length: Math.min(23, AUDIT_WRITES - i) }, (_, j) => request(gw.url).patch(`/admin/keys/${limited.id}`).set('authorization', bearer(KEYS.admin)).send({ description: `note ${i + j}` }));
      expect(new Set((await Promise.all(writes)).map((res) => res.status))).toEqual(new Set([200]));
    }
    await gw.gateway.settled();
    watched = await Watched.open(browser);
    page = await watched.newPage();
    await page.goto(`${gw.url}/console/`);
    await signIn(page, KEYS.admin);
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('Overview: the last hour\'s share of 429s and of upstream errors, the top spenders, the chart', async () => {
    const overview = (await api('/admin/overview')).body;
    expect(overview.lastHour).toEqual({ requests: 55, rejected429: 1, upstreamErrors: 1 });
    await visit(page, 'Overview');
    expect(await page.getByRole('region', { name: 'Last hour' }).locator('dd').allTextContents()).toEqual(['55', '1.8%', '1.8%']);
    for (const [caption, top] of [['Top teams by cost', overview.top.teams], ['Top projects by cost', overview.top.projects], ['Top models by cost', overview.top.models]] as const) {
      const rows = await page.getByRole('table', { name: caption }).locator('tbody tr').all();
      expect(await Promise.all(rows.map(cells)), caption).toEqual(top.map((entry: { name: string; cost: number }) => [entry.name, formatCost(entry.cost)]));
    }
    expect(overview.top.teams.map((entry: { name: string }) => entry.name)).toEqual(['team-a', 'team-b']);
    expect(await page.getByRole('img', { name: 'Cost per day for the last 30 days, stacked by team' }).locator('canvas').count()).toBeGreaterThan(0);
  });

  it('Requests: 50 rows a page, the next page and back, as the API pages them', async () => {
    const first = (await api(`/admin/usage/requests?from=${MONTH_START}&to=${TODAY}&limit=50`)).body;
    const second = (await api(`/admin/usage/requests?from=${MONTH_START}&to=${TODAY}&limit=50&after=${first.last_id}`)).body;
    expect([first.data.length, first.has_more, second.data.length, second.has_more]).toEqual([50, true, 5, false]);
    const shown = () => page.getByRole('button', { name: /^Details of request / }).evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label')));
    const ids = (rows: Array<{ request_id: string }>) => rows.map((row) => `Details of request ${row.request_id}`);
    await visit(page, 'Requests');
    const table = page.getByRole('table', { name: /^Requests from / });
    await expect.poll(shown).toEqual(ids(first.data));
    expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(shown).toEqual(ids(second.data));
    expect(await table.locator('caption').textContent()).toBe(`Requests from ${MONTH_START} to ${TODAY}, page 2`);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(shown).toEqual(ids(first.data));
    expect(await table.locator('caption').textContent()).toBe(`Requests from ${MONTH_START} to ${TODAY}, page 1`);
  });

  it('Requests: filtered by key, and one row\'s every field', async () => {
    const rows = (await api(`/admin/usage/requests?from=${MONTH_START}&to=${TODAY}&key=${limited.id}`)).body.data;
    expect(rows.map((row: { status: number }) => row.status)).toEqual([200, 429]);
    await visit(page, 'Requests');
    const filters = page.getByRole('form', { name: 'Request filters' });
    await filters.getByLabel('Key id').fill(limited.id);
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByRole('button', { name: /^Details of request / }).count()).toBe(2);
    await page.getByRole('button', { name: `Details of request ${rows[1].request_id}` }).click();
    const details = page.getByRole('region', { name: `Request ${rows[1].request_id}` });
    const fields = await details.locator('dt').allTextContents();
    expect(fields).toEqual(Object.keys(rows[1]));
    expect(await details.locator('dd').allTextContents()).toEqual(Object.values(rows[1]).map(String));
    await details.getByRole('button', { name: 'Close details' }).click();
    await details.waitFor({ state: 'detached' });
  });

  it('Audit: the newest 200 entries, then the older ones on request', async () => {
    await gw.gateway.settled();
    const entries: Array<{ at: string }> = (await api(`/admin/audit?from=${WEEK_START}&to=${TODAY}`)).body.data;
    expect(entries.length).toBeGreaterThan(AUDIT_WRITES);
    const newestFirst = entries.map((entry) => formatTime(entry.at)).reverse();
    await visit(page, 'Audit');
    const table = page.getByRole('table', { name: /^Audit log / });
    const times = () => table.locator('tbody td:first-child').allTextContents();
    expect(await table.locator('caption').textContent()).toBe(`Audit log from ${WEEK_START} to ${TODAY}, newest 200 of ${entries.length}`);
    expect(await times()).toEqual(newestFirst.slice(0, 200));
    await page.getByRole('button', { name: `Show ${entries.length - 200} older entries` }).click();
    await expect.poll(times).toEqual(newestFirst);
    expect(await page.getByRole('button', { name: /older entries$/ }).count()).toBe(0);
  });

  it('Usage: grouped by model, the table as the API sums it, and the chart drawn', async () => {
    const rows: Array<{ team: string; project: string; model: string; requests: number; total_tokens: number; cost: number }> = (await api(`/admin/usage?from=${MONTH_START}&to=${TODAY}&groupBy=model`)).body.data;
    await visit(page, 'Usage');
    const filters = page.getByRole('form', { name: 'Usage filters' });
    await filters.getByLabel('Group by').selectOption('model');
    await filters.getByRole('button', { name: 'Apply' }).click();
    const table = page.getByRole('table', { name: /^Usage from / });
    await expect.poll(() => table.locator('th').allTextContents()).toEqual(['Team', 'Project', 'Model', 'Requests', 'Tokens', 'Cost']);
    const expected = rows.map((row) => [row.team, row.project, row.model, formatCount(row.requests), formatCount(row.total_tokens), formatCost(row.cost)]);
    await expect.poll(async () => Promise.all((await table.locator('tbody tr').all()).map(cells))).toEqual(expected);
    expect(await page.getByRole('img', { name: /^Cost per day from / }).locator('canvas').count()).toBeGreaterThan(0);
  });

  it('Teams: each budget a bar of spent against limit', async () => {
    const team = (await api('/admin/teams/team-a')).body;
    await visit(page, 'Teams');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'team-a', exact: true }) });
    const month = row.getByRole('meter', { name: `Cost this month: ${formatCost(team.spend.month.cost)} of 20.00` });
    expect(await month.evaluate((bar) => [(bar as HTMLMeterElement).value, (bar as HTMLMeterElement).max])).toEqual([team.spend.month.cost, 20]);
    expect(await row.getByRole('meter', { name: `Cost today: ${formatCost(team.spend.day.cost)} of 5.00` }).count()).toBe(1);
  });

  it('revokes a key with the keyboard alone: Escape cancels (focus back on its button), the dialog\'s button confirms', async () => {
    await visit(page, 'Keys');
    const label = `Revoke ${limited.id}`;
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? '');
    // Focus moves when the dialog opens and closes, in the frame after the DOM changes: wait for it to arrive (or fail after 5 s).
    const focusReaches = (name: string) =>
      page.waitForFunction((n) => (document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? '') === n, name, { timeout: 5_000 });
    for (let i = 0; i < 200 && (await focused()) !== label; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe(label);
    const dialog = page.getByRole('dialog', { name: `Revoke ${limited.id}?` });
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await focusReaches('Cancel');
    expect(await focused()).toBe('Cancel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await focusReaches(label);
    expect(await focused()).toBe(label);
    expect((await api(`/admin/keys/${limited.id}`)).status).toBe(200);
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Revoke key');
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: limited.id, exact: true }).waitFor({ state: 'detached' });
    expect((await api(`/admin/keys/${limited.id}`)).status).toBe(404);
  });

  it('follows the system\'s dark colours', async () => {
    const colours = () => page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    const light = await colours();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await colours();
    await page.emulateMedia({ colorScheme: 'light' });
    expect([light[0], dark[0]]).toEqual(['rgb(246, 247, 249)', 'rgb(15, 20, 25)']);
    expect(dark[1]).not.toBe(light[1]);
  });

  it('logged no console error, sent no request off 127.0.0.1 and met no failure it did not cause', () => {
    expect(watched.problems).toEqual([]);
  });
});
