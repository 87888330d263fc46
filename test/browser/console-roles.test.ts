import type { Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../helpers/gateway.js';
import { bearer, KEYS } from '../helpers/keys.js';
import { createTestDatabase, relayTo, type TestDatabase } from '../helpers/postgres.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import { eventually } from '../helpers/wait.js';
import { buildConsole, launchChromium, LEAD, PAGES, signIn, startConsoleStack, visit, VIEWER, openConsole, Watched, type ConsoleStack } from './console-harness.js';

/** The buttons of writes: none of them may be shown to a viewer. */
const WRITE_BUTTONS = /^(Create key|Create team|Edit|Rotate|Disable|Enable|Revoke|Reload|Adopt|Save)\b/;

/** One browser and one console build for the whole file. */
let browser: Browser;
let consoleDir: string;
beforeAll(async () => {
  [consoleDir, browser] = await Promise.all([buildConsole(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
});

describe('the console in Chromium: roles, CSRF and sessions (SPEC 16, 17)', () => {
  let stack: ConsoleStack;
  let gw: RunningGateway;
  const contexts: Watched[] = [];

  const open = () => openConsole(browser, gw.url, contexts);

  beforeAll(async () => {
    stack = await startConsoleStack(consoleDir);
    gw = stack.gw;
    // Data of both teams, so that a team-admin of team-a has team-b's to not see.
    expect((await Promise.all([stack.chat(KEYS.teamA), stack.chat(KEYS.teamB)])).map((res) => res.status)).toEqual([200, 200]);
    for (const team of ['team-a', 'team-b']) {
      const adopted = await request(gw.url).put(`/admin/resources/model/${team}-model`).set('authorization', bearer(KEYS.admin)).send({ team, project: 'research' });
      expect(adopted.status).toBe(200);
    }
    await gw.gateway.settled();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a write that lacks the CSRF token (403 csrf_token_invalid)', async () => {
    const { watched, page } = await open();
    await signIn(page, KEYS.admin);
    watched.expectFailure('POST', '/admin/keys', 403);
    const answer = await page.evaluate(async () => {
      const res = await fetch('/admin/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team: 'team-a' }) });
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
    });
    expect(answer).toEqual({ status: 403, code: 'csrf_token_invalid' });
  });

  it('shows a team-admin its own team only', async () => {
    const { page } = await open();
    await signIn(page, LEAD);
    for (const name of ['Overview', 'Teams', 'Keys', 'Usage', 'Requests', 'Resources'] as const) {
      await visit(page, name);
      expect(await page.locator('main').textContent(), name).not.toContain('team-b');
    }
    expect(await page.getByRole('cell', { name: 'team-a-model', exact: true }).count()).toBe(1);
    await visit(page, 'Teams');
    expect(await page.getByRole('table', { name: 'Teams' }).locator('tbody tr').count()).toBe(1);
    await visit(page, 'Keys');
    expect(await page.getByRole('form', { name: 'Create a key' }).getByText('Team: team-a').count()).toBe(1);
    await page.close();
  });

  it('shows a viewer no write controls', async () => {
    const { page } = await open();
    await signIn(page, VIEWER);
    for (const name of PAGES) {
      await visit(page, name);
      expect(await page.getByRole('button', { name: WRITE_BUTTONS }).allTextContents(), name).toEqual([]);
      expect(await page.getByRole('form', { name: /^(Create|Adopt|Edit|Rotate)/ }).count(), name).toBe(0);
    }
    await page.close();
  });

  it('returns to sign-in when the session ends mid-way (its admin key revoked)', async () => {
    const made = await request(gw.url).post('/admin/admin-keys').set('authorization', bearer(KEYS.admin)).send({ role: 'admin', description: 'short-lived' });
    expect(made.status).toBe(201);
    const { watched, page } = await open();
    await signIn(page, made.body.key as string);
    await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
    expect((await request(gw.url).delete(`/admin/admin-keys/${made.body.id as string}`).set('authorization', bearer(KEYS.admin))).status).toBe(204);
    watched.expectFailure('GET', '/admin/keys', 401);
    // The Keys page also reads the model groups its forms offer (SPEC 21).
    watched.expectFailure('GET', '/admin/models', 401);
    // The key's sessions die within a second (SPEC 17): the cookie is refused first, then the page finds out on its next call.
    await eventually(async () => (await watched.context.request.get(`${gw.url}/admin/session`)).status() === 401, 2000);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await page.getByLabel('Admin key').waitFor();
  });

  it('logged no console error, sent no request off 127.0.0.1 and met no failure it did not cause', () => {
    expect(contexts.flatMap((watched) => watched.problems)).toEqual([]);
  });
});

describe('the console while the database is away', () => {
  let database: TestDatabase;
  let relay: TcpProxy;
  let upstreams: FakeUpstream[];
  let gw: RunningGateway;
  let watched: Watched;

  beforeAll(async () => {
    let service: FakeUpstream;
    let inference: FakeUpstream;
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    upstreams = [service, inference];
    let url: string;
    ({ relay, url } = await relayTo(database));
    gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: { url, timeoutMs: 300, requestTimeoutMs: 100 } }), undefined, { consoleDir });
    watched = await Watched.open(browser);
  });
  afterAll(async () => {
    await watched?.close();
    await gw?.close();
    await relay?.close();
    await Promise.all((upstreams ?? []).map((upstream) => upstream.close()));
    await database?.drop();
  });

  it('shows a banner, not a blank page, on 503 database_unavailable, and drops it once the database answers again', async () => {
    const page = await watched.newPage();
    await page.goto(`${gw.url}/console/`);
    await page.getByLabel('Admin key').fill(KEYS.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    const banner = page.getByRole('alert').filter({ hasText: "The gateway's database cannot be reached right now" });
    expect(await banner.count()).toBe(0);

    watched.expectFailure('GET', /^\/admin\//, 503);
    await relay.cut();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await banner.waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Usage');

    await relay.restore();
    // The pool reconnects on its own schedule: each try loads a page and waits for its answer.
    await eventually(async () => {
      const link = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: page.url().endsWith('#/audit') ? 'Usage' : 'Audit', exact: true });
      await Promise.all([page.waitForResponse((res) => new URL(res.url()).pathname.startsWith('/admin/')), link.click()]);
      return (await banner.count()) === 0;
    }, 15_000);
    expect(watched.problems).toEqual([]);
  });
});
