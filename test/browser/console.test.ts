import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../helpers/gateway.js';
import { bearer, KEYS } from '../helpers/keys.js';
import { buildConsole, documentWidth, launchChromium, PAGES, signIn, startConsoleStack, visit, VIEWER, openConsole, Watched, type ConsoleStack } from './console-harness.js';

/**
 * Every run screenshots every page (a page that cannot render fails here); `npm run screenshots`
 * writes them over the README's pictures in docs/console/, other runs into .tmp/ so `npm test`
 * leaves the tree as it found it (times and key ids differ in each picture).
 */
const SCREENSHOTS = join(import.meta.dirname, '../..', process.env.CONSOLE_SCREENSHOTS === 'docs' ? 'docs/console' : '.tmp/console-screenshots');
const TODAY = new Date().toISOString().slice(0, 10);
const MONTH_START = `${TODAY.slice(0, 8)}01`;

/** One browser and one console build for the whole file. */
let browser: Browser;
let consoleDir: string;
beforeAll(async () => {
  [consoleDir, browser] = await Promise.all([buildConsole(), launchChromium()]);
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('the console in Chromium, signed in as an admin (SPEC 17)', () => {
  let stack: ConsoleStack;
  let gw: RunningGateway;
  const contexts: Watched[] = [];
  let admin: Page;
  let created: { id: string; secret: string };

  const chat = (key: string, usage?: string) => stack.chat(key, usage);

  const open = (options: Parameters<typeof Watched.open>[1] = {}) => openConsole(browser, gw.url, contexts, options);

  beforeAll(async () => {
    stack = await startConsoleStack(consoleDir);
    gw = stack.gw;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('signs in with an admin key, a wrong key refused beside the field', async () => {
    const { watched, page } = await open();
    admin = page;
    watched.expectFailure('POST', '/admin/session', 401);
    await page.getByLabel('Admin key').fill('tg-not-a-key-0000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refused = await request(gw.url).post('/admin/session').send({ key: 'tg-not-a-key-0000000000000000' });
    await expect.poll(() => page.getByLabel('Admin key').getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await page.getByLabel('Admin key').getAttribute('aria-describedby'))!.split(' ');
    expect(await page.locator(`[id="${describedBy.at(-1)}"]`).textContent()).toBe(refused.body.error.message);
    await signIn(page, KEYS.admin);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.getByText('ops · admin').count()).toBe(1);
  });

  it('creates a key: checked before sending, the API error beside its field, the secret shown once with a copy button', async () => {
    const watched = contexts[0]!;
    await watched.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await visit(admin, 'Keys');
    const posts: string[] = [];
    admin.on('request', (req) => req.method() === 'POST' && new URL(req.url()).pathname === '/admin/keys' && posts.push(req.url()));
    const form = admin.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Team').fill('not a name!');
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => form.getByLabel('Team').getAttribute('aria-invalid')).toBe('true');
    expect(posts).toEqual([]);

    watched.expectFailure('POST', '/admin/keys', 400);
    await form.getByLabel('Team').fill('team-zzz');
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => form.locator('.field-error').allTextContents()).toEqual(['team: no team "team-zzz" exists (teams.require is on); create it first.']);
    expect(posts).toHaveLength(1);

    await form.getByLabel('Team').fill('team-a');
    await form.getByLabel('Description').fill('made in the console');
    await form.getByLabel('Requests per minute').fill('600');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secretBox = admin.getByRole('region', { name: /^Key .* created$/ });
    await secretBox.waitFor();
    const id = (await secretBox.getByRole('heading').textContent())!.replace(/^Key (.*) created$/, '$1');
    const secret = (await secretBox.getByTestId('secret').textContent())!;
    expect(secret).toMatch(/^tg-/);
    await secretBox.getByRole('button', { name: 'Copy key' }).click();
    await secretBox.getByText('Copied.').waitFor();
    expect(await admin.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await secretBox.getByRole('button', { name: 'Done' }).click();
    await admin.reload();
    await admin.getByRole('cell', { name: id, exact: true }).waitFor();
    expect(await admin.content()).not.toContain(secret);
    created = { id, secret };
  });

  it('uses the new key on /v1; the traffic shows on Overview and Usage', async () => {
    const answers = await Promise.all([chat(created.secret), chat(created.secret, '40,20'), chat(KEYS.teamA, '200,100'), chat(KEYS.teamB, '80,10')]);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    await gw.gateway.settled();
    await visit(admin, 'Overview');
    await admin.reload();
    const today = admin.getByRole('region', { name: 'Today' });
    await expect.poll(() => today.getByTestId('Today-requests').textContent()).toBe('4');
    await visit(admin, 'Usage');
    const row = admin.getByRole('row').filter({ has: admin.getByRole('cell', { name: 'team-a', exact: true }) }).filter({ has: admin.getByRole('cell', { name: 'default', exact: true }) });
    await expect.poll(() => row.getByRole('cell').allTextContents()).toEqual(['team-a', 'default', '3', '377', '0.63']);
  });

  it('downloads the usage CSV, the same as the API answers it', async () => {
    await visit(admin, 'Usage');
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.getByRole('link', { name: 'Download CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const api = await request(gw.url).get(`/admin/usage?from=${MONTH_START}&to=${TODAY}&format=csv`).set('authorization', bearer(KEYS.admin));
    expect(download.suggestedFilename()).toBe('usage.csv');
    expect(csv).toBe(api.text);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('team,project,requests,prompt_tokens,completion_tokens,total_tokens,cost');
    expect(lines).toContain('team-a,default,3,252,125,377,0.627');
  });

  it('shows every page with header cells and named controls, and screenshots it', async () => {
    for (const name of PAGES) {
      await visit(admin, name);
      if (name === 'Requests') {
        await admin.getByRole('button', { name: /^Details of request / }).first().click();
        await admin.getByRole('region', { name: /^Request / }).waitFor();
      }
      const unnamed = await admin.evaluate(() =>
        [...document.querySelectorAll('button, input, select, a[href]')]
          .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute('aria-label') || el.textContent?.trim()))
          .map((el) => el.outerHTML),
      );
      expect(unnamed, name).toEqual([]);
      for (const table of await admin.locator('table').all()) expect(await table.locator('th').count(), name).toBeGreaterThan(0);
      await admin.screenshot({ path: join(SCREENSHOTS, `${name.toLowerCase()}.png`), fullPage: true });
    }
  });

  it('adopts a resource from the Resources page', async () => {
    await visit(admin, 'Resources');
    const form = admin.getByRole('form', { name: 'Adopt a resource' });
    await form.getByLabel('Resource id').fill('qwen-search-ft');
    await form.getByLabel('Team').fill('team-a');
    await form.getByLabel('Project').fill('search');
    await form.getByLabel('Artifact (models)').fill('acme/search/qwen-ft');
    await form.getByRole('button', { name: 'Adopt' }).click();
    await admin.getByRole('cell', { name: 'qwen-search-ft', exact: true }).waitFor();
    await admin.screenshot({ path: join(SCREENSHOTS, 'resources.png'), fullPage: true });
  });

  it('fits a phone (390×844) without horizontal scrolling, in light and dark', async () => {
    const phone = await contexts[0]!.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${gw.url}/console/`);
    await phone.getByRole('navigation', { name: 'Pages' }).waitFor();
    for (const name of PAGES) {
      await visit(phone, name);
      expect(await documentWidth(phone), name).toBeLessThanOrEqual(390);
    }
    await visit(phone, 'Overview');
    await phone.screenshot({ path: join(SCREENSHOTS, 'overview-phone.png'), fullPage: true });
    await phone.emulateMedia({ colorScheme: 'dark' });
    await visit(phone, 'Keys');
    await phone.screenshot({ path: join(SCREENSHOTS, 'keys-phone-dark.png'), fullPage: true });
    await phone.close();
  });

  it('works with the keyboard alone: sign in, follow a link, open a page', async () => {
    const { page } = await open();
    await page.getByLabel('Admin key').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('key');
    await page.keyboard.type(VIEWER);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'Keys'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
    }
    expect(focused).toBe('Keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Keys', exact: true }).waitFor();
    await page.close();
  });

  it('edits a key\'s limits, rotates it with an overlap, disables and enables it', async () => {
    await visit(admin, 'Keys');
    const row = admin.getByRole('row').filter({ has: admin.getByRole('cell', { name: created.id, exact: true }) });
    await admin.getByRole('button', { name: `Edit ${created.id}` }).click();
    const edit = admin.getByRole('form', { name: `Edit ${created.id}` });
    await edit.getByLabel('Requests per minute').fill('1.5');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => edit.getByLabel('Requests per minute').getAttribute('aria-invalid')).toBe('true');
    await edit.getByLabel('Requests per minute').fill('1200');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.getByRole('cell').nth(3).textContent()).toBe('rpm 1,200');

    // Limits the form does not show (set through the API) survive an edit of those it does.
    const patched = await request(gw.url).patch(`/admin/keys/${created.id}`).set('authorization', bearer(KEYS.admin)).send({ limits: { rpm: 1200, tokensPerDay: 5000, concurrency: 4, soft: true } });
    expect(patched.status).toBe(200);
    await visit(admin, 'Overview');
    await visit(admin, 'Keys');
    await expect.poll(() => row.getByRole('cell').nth(3).textContent()).toBe('rpm 1,200 · tokensPerDay 5,000 · concurrency 4 · soft (alerts, never refuses)');
    await admin.getByRole('button', { name: `Edit ${created.id}` }).click();
    await edit.getByLabel('Requests per minute').fill('900');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.getByRole('cell').nth(3).textContent()).toBe('rpm 900 · tokensPerDay 5,000 · concurrency 4 · soft (alerts, never refuses)');
    const saved = await request(gw.url).get(`/admin/keys/${created.id}`).set('authorization', bearer(KEYS.admin));
    expect(saved.body.limits).toEqual({ rpm: 900, tokensPerDay: 5000, concurrency: 4, soft: true });

    await admin.getByRole('button', { name: `Rotate ${created.id}` }).click();
    const rotate = admin.getByRole('form', { name: `Rotate ${created.id}` });
    await rotate.getByLabel('Old secret keeps working for (seconds)').fill('600');
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    const secretBox = admin.getByRole('region', { name: `Key ${created.id} rotated` });
    const rotated = (await secretBox.getByTestId('secret').textContent())!;
    expect(rotated).not.toBe(created.secret);
    expect([(await chat(rotated)).status, (await chat(created.secret)).status]).toEqual([200, 200]);
    await secretBox.getByRole('button', { name: 'Done' }).click();

    await admin.getByRole('button', { name: `Disable ${created.id}` }).click();
    await expect.poll(() => row.getByRole('cell').nth(5).textContent()).toBe('Disabled');
    const refused = await chat(rotated);
    expect([refused.status, refused.body.error.message]).toEqual([401, 'This API key is disabled.']);
    await admin.getByRole('button', { name: `Enable ${created.id}` }).click();
    await expect.poll(() => row.getByRole('cell').nth(5).textContent()).toBe('Active');
    expect((await chat(rotated)).status).toBe(200);
    created = { id: created.id, secret: rotated };
  });

  it('places the API\'s refusal of a filter beside the field it names', async () => {
    await visit(admin, 'Usage');
    contexts[0]!.expectFailure('GET', '/admin/usage', 400);
    const form = admin.getByRole('form', { name: 'Usage filters' });
    await form.getByLabel('From (UTC day)').fill('2020-01-01');
    await form.getByRole('button', { name: 'Apply' }).click();
    const api = await request(gw.url).get(`/admin/usage?from=2020-01-01&to=${TODAY}`).set('authorization', bearer(KEYS.admin));
    expect(api.body.error.param).toBe('to');
    await expect.poll(() => form.locator('.field-error').allTextContents()).toEqual([api.body.error.message]);
    expect(await form.getByLabel('To (UTC day)').getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('From (UTC day)').fill(MONTH_START);
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => form.locator('.field-error').count()).toBe(0);
  });

  it('opens a team\'s page: its budgets, projects and keys', async () => {
    await visit(admin, 'Teams');
    await admin.getByRole('link', { name: 'team-a', exact: true }).click();
    await admin.getByRole('region', { name: 'Team team-a' }).waitFor();
    const projects = admin.getByRole('table', { name: 'Projects of team-a, usage this month' });
    // The first two requests, team-a-bot's, and three of the rotation test's (12 + 5 tokens each).
    await expect.poll(() => projects.getByRole('row').filter({ has: admin.getByRole('cell', { name: 'default', exact: true }) }).getByRole('cell').allTextContents()).toEqual(['default', '6', '428', '0.71']);
    expect(await projects.getByRole('cell', { name: 'prod', exact: true }).count()).toBe(1);
    expect(await admin.getByRole('table', { name: 'Keys of team-a' }).getByRole('cell', { name: created.id, exact: true }).count()).toBe(1);
    await admin.screenshot({ path: join(SCREENSHOTS, 'team.png'), fullPage: true });
  });

  it('reloads the configuration from Settings and shows the outcome', async () => {
    await visit(admin, 'Settings');
    contexts[0]!.expectFailure('POST', '/admin/config/reload', 400);
    await admin.getByRole('button', { name: 'Reload' }).click();
    await admin.getByRole('status').filter({ hasText: 'not started from a config file' }).waitFor();
    const lastReload = admin.locator('.details div').filter({ has: admin.getByText('Last reload', { exact: true }) }).locator('dd');
    await expect.poll(() => lastReload.textContent()).toMatch(/: refused — this gateway was not started from a config file: nothing to reload$/);
  });

  it('revokes the key after a confirmation; /v1 then answers 401', async () => {
    await visit(admin, 'Keys');
    await admin.getByRole('button', { name: `Revoke ${created.id}` }).click();
    const dialog = admin.getByRole('dialog', { name: `Revoke ${created.id}?` });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await chat(created.secret)).status).toBe(200);
    await admin.getByRole('button', { name: `Revoke ${created.id}` }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await admin.getByRole('cell', { name: created.id, exact: true }).waitFor({ state: 'detached' });
    const refused = await chat(created.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_api_key');
  });

  it('signs out: the session is over for the browser and the gateway', async () => {
    await admin.getByRole('button', { name: 'Sign out' }).click();
    await admin.getByText('Signed out.').waitFor();
    contexts[0]!.expectFailure('GET', '/admin/keys', 401);
    expect((await contexts[0]!.context.request.get(`${gw.url}/admin/keys`)).status()).toBe(401);
    await admin.reload();
    await admin.getByLabel('Admin key').waitFor();
  });

  it('logged no console error, sent no request off 127.0.0.1 and met no failure it did not cause', () => {
    expect(contexts.flatMap((watched) => watched.problems)).toEqual([]);
  });
});
