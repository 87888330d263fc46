import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { CLIENT_ID, CLIENT_SECRET, startTestIdp, type TestIdp, type TestUser } from '../fixtures/oidc-provider.js';
import { startTrainingService, type FakeUpstream } from '../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../helpers/gateway.js';
import { bearer, KEYS } from '../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { buildConsole, launchChromium } from './console-harness.js';

const USERS: Record<string, TestUser> = {
  alice: { email: 'alice@acme.com', name: 'Alice Admin', groups: ['platform-admins', 'finance'] },
  vera: { email: 'vera@acme.com', name: 'Vera Viewer', groups: ['finance'] },
  lena: { email: 'lena@eu.acme.com', name: 'Lena Lead', groups: ['team-a-leads'] },
  nobody: { email: 'nobody@acme.com', name: 'No Group', groups: ['interns'] },
  mallory: { email: 'mallory@evil.example', name: 'Outside', groups: ['platform-admins'] },
};

const SCREENSHOTS = join(import.meta.dirname, '../..', process.env.CONSOLE_SCREENSHOTS === 'docs' ? 'docs/console' : '.tmp/console-screenshots');

const today = (): string => new Date().toISOString().slice(0, 10);

const oidcConfig = (issuer: string) => ({
  issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  displayName: 'Acme SSO',
  roles: { admin: ['platform-admins'], viewer: ['finance'], teamAdmin: { 'team-a': ['team-a-leads'] } },
  allowedDomains: ['acme.com'],
});

/** SPEC 25 in a real browser against a real OpenID Provider: two gateways sharing PostgreSQL. */
describe('console sign-in through the identity provider', () => {
  let idp: TestIdp;
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    const consoleDir = await buildConsole();
    [idp, database, service, inference, browser] = await Promise.all([startTestIdp(), createTestDatabase(), startTrainingService(), startInferenceHost(), launchChromium()]);
    const config = () =>
      testConfig(
        { service: service.url, inference: inference.url },
        { database: { url: database.url, refreshIntervalMs: 60_000 }, console: { oidc: oidcConfig(idp.issuer) }, auth: { failureLimit: { perMinute: 50, blockSeconds: 60 } } },
      );
    [a, b] = await Promise.all([startGateway(config(), undefined, { consoleDir }), startGateway(config(), undefined, { consoleDir })]);
    idp.serve({
      users: USERS,
      redirectUris: [a, b].map((gw) => `${gw.url}/admin/oidc/callback`),
      postLogoutRedirectUris: [a, b].map((gw) => `${gw.url}/console/`),
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([service?.close(), inference?.close(), idp?.stop()]);
    await database?.drop();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    context.setDefaultTimeout(10_000);
    contexts.push(context);
    return context.newPage();
  }

  /** Through the console's button and the IdP's own login form, back to wherever the gateway sends the browser. */
  async function signInAt(page: Page, gw: RunningGateway, login: string): Promise<void> {
    await page.goto(`${gw.url}/console/`);
    await page.getByLabel('Admin key').waitFor();
    if (login === 'alice') await page.screenshot({ path: join(SCREENSHOTS, 'sign-in-sso.png') });
    await page.locator('#sso-sign-in').click();
    await page.waitForURL(/localhost/);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any password');
    await page.locator('button[type=submit]').click();
    await page.waitForURL((url) => url.hostname === '127.0.0.1');
  }

  const session = (page: Page): Promise<{ status: number; body: Record<string, unknown> }> =>
    page.evaluate(async () => {
      const res = await fetch('/admin/session');
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    });

  it('signs an admin in: the console names the person and role, the session and the audit say who', async () => {
    const page = await newPage();
    await signInAt(page, a, 'alice');
    await page.locator('header').getByText('alice@acme.com · admin').waitFor();
    const { status, body } = await session(page);
    expect(status).toBe(200);
    expect(body).toMatchObject({ role: 'admin', team: null, keyId: 'oidc:alice', person: { id: 'oidc:alice', email: 'alice@acme.com', name: 'Alice Admin' } });
    expect(body.signOutUrl).toMatch(new RegExp(`^${idp.issuer}/session/end\\?`));
    // The cookie is the console's own: HttpOnly, Strict, /admin only; the flow's cookie is gone.
    const cookies = await page.context().cookies(`${a.url}/admin`);
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([['tollgate_session', true, 'Strict', '/admin']]);
    const audit = await request(a.url).get('/admin/audit').query({ action: 'session.create', from: today(), to: today() }).set('authorization', bearer(KEYS.admin));
    expect(audit.body.data).toContainEqual(expect.objectContaining({ actor: 'oidc:alice', actorEmail: 'alice@acme.com', actorRole: 'admin', result: 'ok' }));
  });

  it('gives a viewer and a team-admin exactly their roles: a viewer writes nothing, a team-admin sees its team', async () => {
    const viewer = await newPage();
    await signInAt(viewer, a, 'vera');
    await viewer.locator('header').getByText('vera@acme.com · viewer').waitFor();
    const write = await viewer.evaluate(async () => {
      const { csrfToken } = (await (await fetch('/admin/session')).json()) as { csrfToken: string };
      const res = await fetch('/admin/teams', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken }, body: JSON.stringify({ id: 'team-z' }) });
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
    });
    expect(write).toEqual({ status: 403, code: 'insufficient_role' });

    const lead = await newPage();
    await signInAt(lead, b, 'lena');
    await lead.locator('header').getByText('lena@eu.acme.com · team-admin of team-a').waitFor();
    expect((await session(lead)).body).toMatchObject({ role: 'team-admin', team: 'team-a', keyId: 'oidc:lena' });
  });

  it('refuses a person in no mapped group, and one outside the allowed domains, with a page that says why', async () => {
    const page = await newPage();
    await signInAt(page, a, 'nobody');
    await expect(page.locator('h1').textContent()).resolves.toBe('Your account has no role in this console');
    expect((await page.context().cookies(`${a.url}/admin`)).map((c) => c.name)).toEqual([]);

    const outside = await newPage();
    await signInAt(outside, a, 'mallory');
    await expect(outside.locator('h1').textContent()).resolves.toBe('Your account may not use this console');
    await expect(outside.locator('#reason').textContent()).resolves.toContain('acme.com');
    expect((await outside.context().cookies(`${a.url}/admin`)).map((c) => c.name)).toEqual([]);
  });

  it('refuses a replayed callback and a tampered state: no session, "Sign-in failed", an audit entry', async () => {
    const page = await newPage();
    let callback: string | undefined;
    // The IdP's redirect back, as the browser followed it: the code and the state.
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/admin/oidc/callback') callback = req.url();
    });
    await page.goto(`${a.url}/console/`);
    await page.locator('#sso-sign-in').click();
    await page.waitForURL(/localhost/);
    // The flow cookie the callback will carry (it is cleared once the callback has used it).
    const flow = (await page.context().cookies(`${a.url}/admin/oidc/callback`)).find((c) => c.name === 'tollgate_oidc');
    expect(flow).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/admin/oidc' });
    const flowCookie = `tollgate_oidc=${flow!.value}`;
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any password');
    await page.locator('button[type=submit]').click();
    await page.locator('header').getByText('alice@acme.com · admin').waitFor();
    expect(callback).toBeDefined();

    // The same code and flow again (as an attacker who saw them would send them): the IdP refuses a used code.
    const replay = await request(a.url).get(new URL(callback!).pathname + new URL(callback!).search).set('cookie', flowCookie);
    expect(replay.status).toBe(401);
    expect(replay.text).toContain('Sign-in failed');
    expect(String(replay.headers['set-cookie'])).not.toContain('tollgate_session=');

    // A state that is not the flow's.
    const tampered = new URL(callback!);
    tampered.searchParams.set('state', 'not-the-state');
    const altered = await request(a.url).get(tampered.pathname + tampered.search).set('cookie', flowCookie);
    expect(altered.status).toBe(401);
    expect(altered.text).toContain('Sign-in failed');

    // No flow at all (the callback opened in another browser).
    const bare = await request(a.url).get(new URL(callback!).pathname + new URL(callback!).search);
    expect(bare.status).toBe(401);
    expect(bare.text).toContain('no valid state');

    const audit = await request(a.url).get('/admin/audit').query({ action: 'session.create', from: today(), to: today() }).set('authorization', bearer(KEYS.admin));
    const failed = (audit.body.data as { result: string }[]).filter((entry) => entry.result === 'oidc_sign_in_failed');
    expect(failed.length).toBeGreaterThanOrEqual(3);
  });

  it('signs out on every instance and at the identity provider', async () => {
    const page = await newPage();
    await signInAt(page, a, 'alice');
    await page.locator('header').getByText('alice@acme.com · admin').waitFor();
    const cookie = (await page.context().cookies(`${a.url}/admin`)).find((c) => c.name === 'tollgate_session')!;
    expect((await request(b.url).get('/admin/session').set('cookie', `tollgate_session=${cookie.value}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The IdP's end-session page (it asks to confirm the sign-out there).
    await page.waitForURL((url) => url.hostname === 'localhost' && url.pathname.startsWith('/session/end'));
    expect((await request(b.url).get('/admin/session').set('cookie', `tollgate_session=${cookie.value}`)).status).toBe(401);
  });

  it('says so on the sign-in page while the IdP is down, and key sign-in keeps working', async () => {
    await idp.stop();
    try {
      const page = await newPage();
      // A gateway that never reached the IdP: b's discovery is done, so a new instance shows the first-contact case.
      const c = await startGateway(testConfig({ service: service.url, inference: inference.url }, { console: { oidc: oidcConfig(idp.issuer) } }));
      try {
        const status = await request(c.url).get('/admin/oidc/status');
        expect(status.status).toBe(200);
        expect(status.body).toMatchObject({ keySignIn: true, oidc: { name: 'Acme SSO', ready: false } });
        expect(status.body.oidc.message).toContain(`The identity provider at ${idp.issuer} cannot be reached`);
        const login = await request(c.url).get('/admin/oidc/login');
        expect(login.status).toBe(503);
        expect(login.text).toContain('Sign in with an admin key meanwhile.');
      } finally {
        await c.close();
      }
      await page.goto(`${a.url}/console/`);
      await page.getByLabel('Admin key').fill(KEYS.admin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('header').getByText('· admin').waitFor();
    } finally {
      await idp.start();
    }
  });
});

/** Groups only in the user-info answer (the OIDC default for the code flow), a short ID token, and no key sign-in. */
describe('console sign-in through an IdP that keeps groups in user info, with key sign-in off', () => {
  let idp: TestIdp;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    const consoleDir = await buildConsole();
    [idp, service, inference, browser] = await Promise.all([startTestIdp(), startTrainingService(), startInferenceHost(), launchChromium()]);
    gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { console: { keySignIn: false, oidc: oidcConfig(idp.issuer) } }), undefined, { consoleDir });
    idp.serve({ users: USERS, redirectUris: [`${gw.url}/admin/oidc/callback`], postLogoutRedirectUris: [`${gw.url}/console/`], claimsInIdToken: false, idTokenTtl: 120 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await Promise.all([service?.close(), inference?.close(), idp?.stop()]);
  });

  it('offers only the IdP, reads groups from user info, and ends the session with the ID token', async () => {
    expect((await request(gw.url).post('/admin/session').send({ key: KEYS.admin })).body.error).toMatchObject({ code: 'key_sign_in_disabled' });
    const context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/`);
    await page.locator('#sso-sign-in').waitFor();
    expect(await page.getByLabel('Admin key').count()).toBe(0);
    const before = Date.now();
    await page.locator('#sso-sign-in').click();
    await page.locator('input[name=login]').fill('vera');
    await page.locator('input[name=password]').fill('any password');
    await page.locator('button[type=submit]').click();
    await page.locator('header').getByText('vera@acme.com · viewer').waitFor();
    const body = await page.evaluate(async () => (await (await fetch('/admin/session')).json()) as { expiresAt: string });
    // The earlier of 8 hours and the ID token's expiry (120 s), to the second.
    expect(Date.parse(body.expiresAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 120_000 - 1000);
    expect(Date.parse(body.expiresAt)).toBeLessThanOrEqual(Date.now() + 120_000);
    await context.close();
  });
});
