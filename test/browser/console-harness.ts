import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';

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

  static async open(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', acceptDownloads: true, ...options });
    const watched = new Watched(context);
    // A step that fails should fail in seconds, not after playwright's default 30 s.
    context.setDefaultTimeout(5000);
    // The console asks whether a session exists when it opens: 401 before sign-in is the normal answer.
    watched.expectFailure('GET', '/admin/session', 401);
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      watched.problems.push(`request off 127.0.0.1: ${url.href}`);
      return route.abort('blockedbyclient');
    });
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
export const documentWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth);
