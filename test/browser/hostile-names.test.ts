import type { Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, KEYS } from '../helpers/keys.js';
import { buildConsole, launchChromium, PAGES, signIn, startConsoleStack, visit, Watched, type ConsoleStack } from './console-harness.js';

/**
 * Names an attacker controls — a key's and a team's description (a team-admin writes them), a
 * model name (any /v1 client sends one) — shown in every page of the console in Chromium: as
 * text, never as markup. A script that ran would set window.__pwned.
 */
const MARKUP = [
  '<img src=x onerror="window.__pwned=\'img\'">',
  '<script>window.__pwned=\'script\'</script>',
  '"><svg onload="window.__pwned=\'svg\'">',
  '<a href="javascript:window.__pwned=\'href\'">click</a>',
];
const MODEL = `<img src=x onerror="window.__pwned='model'">`;

let browser: Browser;
let consoleDir: string;
beforeAll(async () => {
  [consoleDir, browser] = await Promise.all([buildConsole(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
});

describe('attacker-controlled names in the console', () => {
  let stack: ConsoleStack;
  const keyIds: string[] = [];
  beforeAll(async () => {
    stack = await startConsoleStack(consoleDir);
    const url = stack.gw.url;
    const admin = { authorization: bearer(KEYS.admin) };
    for (const description of MARKUP) keyIds.push((await request(url).post('/admin/keys').set(admin).send({ team: 'team-a', description }).expect(201)).body.id as string);
    await request(url).post('/admin/teams').set(admin).send({ id: 'team-x', description: MARKUP[0] }).expect(201);
    // The model name reaches the ledger whatever the upstream says of it.
    await request(url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).set('x-fixture-usage', '3,1').send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    await stack.chat(KEYS.teamA);
    await stack.gw.gateway.settled();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows them as text on every page: no markup made of them, no script run', async () => {
    const watched = await Watched.open(browser);
    try {
      const page = await watched.newPage();
      await page.goto(`${stack.gw.url}/console/`);
      await signIn(page, KEYS.admin);
      const pwned = () => page.evaluate(() => (window as { __pwned?: string }).__pwned ?? null);
      const markupIn = () => page.locator('main img, main script, main svg[onload], main a[href^="javascript:"]').count();
      for (const name of PAGES) {
        await visit(page, name);
        expect([name, await pwned(), await markupIn()]).toEqual([name, null, 0]);
      }
      // The model name, on Requests as the characters it is made of.
      await visit(page, 'Requests');
      expect(await page.locator('main').textContent()).toContain(MODEL);
      // The team's description on its page.
      await visit(page, 'Teams');
      await page.getByRole('link', { name: 'team-x', exact: true }).click();
      await expect.poll(async () => (await page.locator('main').textContent()) ?? '').toContain(MARKUP[0]);
      expect([await pwned(), await markupIn()]).toEqual([null, 0]);
      // Each key's description in its edit form.
      await visit(page, 'Keys');
      for (const [i, id] of keyIds.entries()) {
        await page.getByRole('button', { name: `Edit ${id}`, exact: true }).click();
        const form = page.getByRole('form', { name: `Edit ${id}` });
        expect(await form.getByLabel('Description').inputValue()).toBe(MARKUP[i]);
        expect([id, await pwned(), await markupIn()]).toEqual([id, null, 0]);
        await form.getByRole('button', { name: 'Cancel' }).click();
      }
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
