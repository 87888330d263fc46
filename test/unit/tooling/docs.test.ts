/**
 * The docs check: the pages a user reads stay true to the repository.
 *
 * Rules:
 * - Links. Every relative link in README.md and docs/*.md (inline `[t](target)`, images, and
 *   reference definitions; not inside code) resolves to a file or folder inside the repository,
 *   and its `#anchor` to a heading of that page by GitHub's slug rules (lower case, punctuation
 *   dropped, spaces to hyphens, repeats `-1`, `-2`) or an `<a id="…">`. Absolute URLs are not
 *   fetched (no network in CI).
 * - Config keys. Every setting in config/example.yaml (identifier-named keys; array items
 *   flattened, so `auth.keys[].id` is `auth.keys.id`; data keys such as `"team-a/*"` or a model
 *   pattern skipped) is named on some page: its last path segment as a word of an inline code span
 *   (`` `bodyLimit` ``, `` `{path, intervalMs: 5000}` ``), or a dotted path ending in it
 *   (`` `upstreams.*.maxSockets` ``), or as `leaf:` in a fenced block. Strict enough that a new
 *   key nobody documented fails, sane enough that a table row `| \`eject.baseMs\` |` counts.
 * - Sizes. README.md ≤ 250 lines, each docs page ≤ 300, docs/performance.md ≤ 120.
 * - Examples. A fenced block right after `<!-- example: path -->` equals that file byte for byte
 *   (docs/clients.md; the files are run by test/integration/clients-examples.test.ts).
 */
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, codeWords, configKeys, githubSlug, staleIncludes, unnamedKeys, type Page } from '../../helpers/docs-check.js';

const root = join(import.meta.dirname, '..', '..', '..');
const read = (path: string): Page => ({ path, text: readFileSync(join(root, path), 'utf8') });
const pages: Page[] = [read('README.md'), ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => read(`docs/${f}`))];

describe('the docs', () => {
  it('every relative link of README.md and docs/*.md resolves, #anchors included', () => {
    expect(pages.flatMap((page) => brokenLinks(root, page))).toEqual([]);
  });

  it('every config key of config/example.yaml is named on some page', () => {
    const missing = unnamedKeys(configKeys(readFileSync(join(root, 'config/example.yaml'), 'utf8')), codeWords(pages));
    expect(missing.map((key) => `config/example.yaml:${key.line}: ${key.path} (name \`${key.leaf}\` on a docs page)`)).toEqual([]);
  });

  it('pages stay short: README ≤ 250 lines, docs pages ≤ 300, performance ≤ 120', () => {
    const bound = (path: string): number => (path === 'README.md' ? 250 : path === 'docs/performance.md' ? 120 : 300);
    const lines = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    expect(pages.filter((p) => lines(p.text) > bound(p.path)).map((p) => `${p.path}: ${lines(p.text)} lines (bound ${bound(p.path)})`)).toEqual([]);
  });

  it('every example block equals the file it shows', () => {
    expect(pages.flatMap((page) => staleIncludes(root, page))).toEqual([]);
  });
});

describe('the docs check itself', () => {
  const scratch = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-check-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs/a.md'), '# Upstreams\n\n## Every core: `server.workers`\n\n## Every core: `server.workers`\n\n```\n[not a link](nowhere.md)\n```\n');
    return dir;
  };

  it('names the page, line and target of a missing file, a missing anchor and a link out of the repository', () => {
    const dir = scratch();
    const page = { path: 'README.md', text: 'Intro\n[ok](docs/a.md#every-core-serverworkers-1) [gone](docs/b.md)\n[bad anchor](docs/a.md#upstream) `[code](x.md)`\n[spec](../shared/SPEC.md)\n' };
    expect(brokenLinks(dir, page)).toEqual([
      'README.md:2: docs/b.md (no file docs/b.md)',
      'README.md:3: docs/a.md#upstream (no heading #upstream in docs/a.md)',
      'README.md:4: ../shared/SPEC.md (outside the repository)',
    ]);
  });

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Every core: `server.workers`')).toBe('every-core-serverworkers');
    expect(githubSlug('Malformed requests are 4xx, and never a stack in the log')).toBe('malformed-requests-are-4xx-and-never-a-stack-in-the-log');
    expect(githubSlug('Who is calling? [see](x.md)')).toBe('who-is-calling-see');
    expect([...anchorsOf('# A\n## A\n<a id="x"></a>\n')]).toEqual(['a', 'a-1', 'x']);
  });

  it('finds a key no page names, by its dotted path and line, and skips data keys', () => {
    const yaml = 'server:\n  bodyLimit: 1mb\n  newKnob: 3\nrateLimits:\n  projects:\n    "team-a/*": { rpm: 1 }\n';
    const words = codeWords([{ path: 'docs/a.md', text: '`server`: `server.bodyLimit`, `{ rpm: 5 }` and `rateLimits`\n```yaml\nprojects:\n```\n' }]);
    expect(unnamedKeys(configKeys(yaml), words)).toEqual([{ path: 'server.newKnob', leaf: 'newKnob', line: 3 }]);
  });

  it('finds an example block that differs from its file', () => {
    const dir = scratch();
    mkdirSync(join(dir, 'docs/examples'));
    writeFileSync(join(dir, 'docs/examples/x.sh'), 'echo new\n');
    const page = { path: 'docs/c.md', text: '<!-- example: examples/x.sh -->\n```sh\necho old\n```\n' };
    expect(staleIncludes(dir, page)).toEqual(['docs/c.md:1: the block differs from examples/x.sh (copy the file into the page)']);
  });
});
