import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, KEYS } from '../helpers/keys.js';
import { buildConsole, launchChromium, LEAD, MODEL, openConsole, signIn, startConsoleStack, visit, Watched, type ConsoleStack } from './console-harness.js';

const SCREENSHOTS = join(import.meta.dirname, '../..', process.env.CONSOLE_SCREENSHOTS === 'docs' ? 'docs/console' : '.tmp/console-screenshots');
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';

/** SPEC 21 in the console: the models field of the key form, and the Models page, in Chromium. */
describe('models in the console (Chromium)', () => {
  let browser: Browser;
  let stack: ConsoleStack;
  const contexts: Watched[] = [];

  beforeAll(async () => {
    let consoleDir: string;
    [consoleDir, browser] = await Promise.all([buildConsole(), launchChromium()]);
    stack = await startConsoleStack(consoleDir);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    for (const watched of contexts) expect(watched.problems).toEqual([]);
    await browser?.close();
    await stack?.close();
  });

  it('creates a key narrowed to one pattern; the key is refused any other model, and its list is shown', async () => {
    const { page } = await openConsole(browser, stack.gw.url, contexts);
    await signIn(page, KEYS.admin);
    await visit(page, 'Keys');
    const form = page.getByRole('form', { name: 'Create a key' });
    await expect.poll(() => form.getByText('Groups: @base, @premium.').count()).toBe(1);
    await form.getByLabel('Team').fill('team-a');
    await form.getByLabel('Models').fill('meta-llama/*');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByRole('region', { name: /^Key .* created$/ });
    await secretBox.waitFor();
    const id = (await secretBox.getByRole('heading').textContent())!.replace(/^Key (.*) created$/, '$1');
    const secret = (await secretBox.getByTestId('secret').textContent())!;
    await secretBox.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: id, exact: true }) });
    await expect.poll(() => row.getByRole('cell', { name: 'meta-llama/*', exact: true }).count()).toBe(1);
    const chat = (model: string) => request(stack.gw.url).post('/v1/chat/completions').set('authorization', bearer(secret)).send({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect((await chat(LLAMA)).status).toBe(200);
    const refused = await chat(MODEL);
    expect([refused.status, refused.body.error.code]).toEqual([404, 'model_not_found']);
  });

  it('shows a team-admin its team\'s list and refuses a wider key beside the models field', async () => {
    const { watched, page } = await openConsole(browser, stack.gw.url, contexts);
    await signIn(page, LEAD);
    watched.expectFailure('POST', '/admin/keys', 403);
    await visit(page, 'Keys');
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Models').fill('@premium');
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect
      .poll(() => form.locator('.field-error').allTextContents())
      .toEqual(['The admin role "team-admin" may not give a key the model pattern "openai/*": it is not within its team\'s models.']);
    await visit(page, 'Models');
    const teams = page.getByRole('table', { name: 'Models each team may use' });
    await teams.getByRole('cell', { name: 'OpenPipe/*, meta-llama/*', exact: true }).waitFor();
    expect(await teams.getByRole('row').count()).toBe(2);
  });

  it('changes a team\'s models on its page (admins); a bad group is answered beside the field', async () => {
    expect((await request(stack.gw.url).post('/admin/teams').set('authorization', bearer(KEYS.admin)).send({ id: 'team-m' })).status).toBe(201);
    const { watched, page } = await openConsole(browser, stack.gw.url, contexts);
    await signIn(page, KEYS.admin);
    await page.goto(`${stack.gw.url}/console/#/teams/team-m`);
    const form = page.getByRole('form', { name: 'Models of team-m' });
    watched.expectFailure('PATCH', '/admin/teams/team-m', 400);
    await form.getByLabel('Models').fill('@nope');
    await form.getByRole('button', { name: 'Save models' }).click();
    await expect.poll(() => form.locator('.field-error').allTextContents()).toEqual(['models[0]: unknown group "@nope" (known: @base, @premium)']);
    await form.getByLabel('Models').fill('@premium');
    await form.getByRole('button', { name: 'Save models' }).click();
    await page.getByText('Models: @premium').waitFor();
    const team = await request(stack.gw.url).get('/admin/teams/team-m').set('authorization', bearer(KEYS.admin));
    expect(team.body.models).toEqual(['@premium']);
  });

  it('shows the Models page: groups, default, each team\'s effective list, routes, aliases and fallbacks with their upstream\'s health, usage by model', async () => {
    const { page } = await openConsole(browser, stack.gw.url, contexts);
    await signIn(page, KEYS.admin);
    expect((await stack.chat(KEYS.teamA)).status).toBe(200);
    await stack.gw.gateway.settled();
    await visit(page, 'Models');
    await page.getByRole('table', { name: 'Model groups' }).getByRole('cell', { name: '@base', exact: true }).waitFor();
    const teams = page.getByRole('table', { name: 'Models each team may use' });
    expect(await teams.getByRole('row').filter({ has: page.getByRole('cell', { name: 'team-b', exact: true }) }).getByRole('cell').allTextContents()).toEqual(['team-b', 'the default', '*']);
    await page.getByRole('table', { name: 'Usage by model this month' }).getByRole('cell', { name: MODEL, exact: true }).first().waitFor();
    const rowsOf = (caption: string) => page.getByRole('table', { name: caption }).locator('tbody tr');
    const cells = async (caption: string): Promise<string[][]> => Promise.all((await rowsOf(caption).all()).map((row) => row.getByRole('cell').allTextContents()));
    expect(await cells('Model routes')).toEqual([
      ['OpenPipe/*', 'vllm', '1/1 up'],
      ['anything else', 'service', '1/1 up'],
    ]);
    expect(await cells('Model aliases')).toEqual([['fast', 'OpenPipe/Qwen3-14B-Instruct', 'vllm', '1/1 up']]);
    expect(await cells('Model fallbacks')).toEqual([['OpenPipe/Qwen3-14B-Instruct', `${LLAMA} → service (1/1 up)`]]);
    await page.screenshot({ path: join(SCREENSHOTS, 'models.png'), fullPage: true });
  });
});
