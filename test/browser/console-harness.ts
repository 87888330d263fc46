import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import request from 'supertest';
import { build } from 'vite';
import { expect } from 'vitest';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService } from '../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES } from '../helpers/keys.js';

export const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
/** Admin keys of the other roles (SPEC 16): a viewer, and the team-admin of team-a. */
export const VIEWER = 'tg-test-viewer-key-cccccccccccccccccc';
export const LEAD = 'tg-test-team-a-lead-dddddddddddddddd';
/** The navigation of SPEC 17, in order. */
export const PAGES = ['Overview', 'Teams', 'Keys', 'Usage', 'Requests', 'Audit', 'Resources', 'Models', 'Settings'] as const;

/** Debian's chromium package (`.ci/run` installs it): the browser builds playwright downloads cannot be fetched here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Quiet, offline, no sandbox (containers run as root); playwright adds --headless and a fresh --user-data-dir of its own. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Builds the console with the project's Vite config into a folder of its own (a parallel `npm run build` is left alone). */
export async function buildConsole(): Promise<string> {
  const outDir = join(mkdtempSync(join(tmpdir(), 'tollgate-console-build-')), 'console');
  await build({ configFile: join(import.meta.dirname, '../../console/vite.config.ts'), build: { outDir, emptyOutDir: true }, logLevel: 'silent' });
  return outDir;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** A failed answer the test caused on purpose (a bad key, a write without the token, a dead session). */
export interface ExpectedFailure {
  readonly method: string;
  readonly path: string | RegExp;
  readonly status: number;
}

/**
 * What a browser context did wrong: console errors and page errors (a CSP violation is one), a
 * request to any host but 127.0.0.1 (refused before it leaves), and an answer ≥ 400 the test
 * did not expect. Chromium logs every failed fetch as a console error; those are judged by the
 * answer check instead, which knows which failures were asked for.
 */
export class Watched {
  readonly problems: string[] = [];
  private readonly expected: ExpectedFailure[] = [];

  private constructor(readonly context: BrowserContext) {}

  /**
   * `refuseOffHost: false` (timings) only records a request to another host: refusing it means
   * routing every request through playwright, a round trip to this process and back for each.
   */
  static async open(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}, { refuseOffHost = true } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', acceptDownloads: true, ...options });
    const watched = new Watched(context);
    // A step that fails should fail in seconds, not after playwright's default 30 s.
    context.setDefaultTimeout(5000);
    // The console asks whether a session exists when it opens: 401 before sign-in is the normal answer.
    watched.expectFailure('GET', '/admin/session', 401);
    const offHost = (href: string): boolean => new URL(href).hostname !== '127.0.0.1' && watched.problems.push(`request off 127.0.0.1: ${href}`) > 0;
    if (refuseOffHost) await context.route('**/*', (route) => (offHost(route.request().url()) ? route.abort('blockedbyclient') : route.continue()));
    else context.on('request', (req) => offHost(req.url()));
    context.on('response', (res) => {
      const url = new URL(res.url());
      if (res.status() < 400) return;
      const method = res.request().method();
      const matches = (e: ExpectedFailure): boolean => e.method === method && e.status === res.status() && (typeof e.path === 'string' ? e.path === url.pathname : e.path.test(url.pathname));
      if (!watched.expected.some(matches)) watched.problems.push(`unexpected ${res.status()} for ${method} ${url.pathname}${url.search}`);
    });
    context.on('page', (page) => watched.watchPage(page));
    return watched;
  }

  private watchPage(page: Page): void {
    page.on('pageerror', (err) => this.problems.push(`page error: ${err.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      if (message.text().startsWith('Failed to load resource: the server responded with a status of')) return;
      this.problems.push(`console error: ${message.text()}`);
    });
  }

  expectFailure(method: string, path: string | RegExp, status: number): void {
    this.expected.push({ method, path, status });
  }

  async newPage(): Promise<Page> {
    return this.context.newPage();
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/** The widest the document gets: wider than the viewport means a horizontal scrollbar. */
/** A new watched context (kept in `contexts`, for the test to check and close) with a page on the console. */
export async function openConsole(browser: Browser, url: string, contexts: Watched[], options: Parameters<typeof Watched.open>[1] = {}): Promise<{ watched: Watched; page: Page }> {
  const watched = await Watched.open(browser, options);
  contexts.push(watched);
  const page = await watched.newPage();
  await page.goto(`${url}/console/`);
  return { watched, page };
}

export const documentWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth);

export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
}

/** Follows a navigation link and waits until the page has loaded what it shows, charts drawn. */
export async function visit(page: Page, name: (typeof PAGES)[number]): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
  await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
  // The chart library is a chunk of its own: a chart is drawn once it has come.
  await expect.poll(() => page.evaluate(() => [...document.querySelectorAll('.chart')].every((chart) => chart.querySelector('canvas') !== null))).toBe(true);
}

export interface ConsoleStack {
  readonly gw: RunningGateway;
  /** A chat completion with `key`, the fixture reporting `usage` ("prompt,completion") tokens. */
  chat(key: string, usage?: string): request.Test;
  close(): Promise<void>;
}

/**
 * A gateway serving the console build, on SQLite, in front of the fixture upstreams: the test
 * keys, a viewer and a team-admin of team-a, two team records with budgets, and prices.
 */
export async function startConsoleStack(consoleDir: string): Promise<ConsoleStack> {
  const [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
  const config = testConfig(
    { service: service.url, inference: inference.url },
    {
      auth: {
        keys: KEY_ENTRIES,
        admin: { keys: [...ADMIN_ENTRIES, { id: 'finance', sha256: digest(VIEWER), role: 'viewer' }, { id: 'team-a-lead', sha256: digest(LEAD), role: 'team-admin', team: 'team-a' }] },
      },
      teams: {
        require: true,
        records: [
          { id: 'team-a', description: 'Search', limits: { costPerMonth: 20, costPerDay: 5 }, models: ['@base', 'meta-llama/*'] },
          { id: 'team-b', description: 'Ranking', limits: { costPerMonth: 2 } },
        ],
      },
      // Model groups (SPEC 21): what the Models page and the models fields show.
      // Routing (SPEC 22): a named upstream (the same fixture), an alias and a fallback for the page.
      upstreams: { vllm: { url: service.url, timeoutMs: 2000 } },
      models: {
        groups: { base: ['OpenPipe/*'], premium: ['openai/*'] },
        routes: [{ match: 'OpenPipe/*', upstream: 'vllm' }],
        aliases: { fast: 'OpenPipe/Qwen3-14B-Instruct' },
        fallbacks: { 'OpenPipe/Qwen3-14B-Instruct': ['meta-llama/Llama-3.1-8B-Instruct'] },
      },
      metering: { prices: { models: { [MODEL]: { prompt: 1000, completion: 3000 } } } },
    },
  );
  const gw = await startGateway(config, undefined, { consoleDir });
  return {
    gw,
    chat: (key, usage = '12,5') =>
      request(gw.url).post('/v1/chat/completions').set('authorization', bearer(key)).set('x-fixture-usage', usage).send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 }),
    async close() {
      await gw.close();
      await Promise.all([service.close(), inference.close()]);
    },
  };
}
