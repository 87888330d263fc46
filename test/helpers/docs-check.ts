// The docs check's rules (test/unit/tooling/docs.test.ts states them): links and anchors as GitHub
// renders them, config keys named on a page, code blocks that include an example file verbatim.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';

export interface Page { path: string; text: string }

/** The page with fenced code blocks blanked (their lines kept, so line numbers still hold). */
function proseOf(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const opener = /^\s*(```+|~~~+)/.exec(line);
    if (fence === null && opener) { fence = opener[1]!; return ''; }
    if (fence !== null) { if (line.trim().startsWith(fence)) fence = null; return ''; }
    return line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
  });
}

/** GitHub's heading slug (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/<[^>]+>/g, '');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page offers: heading slugs (repeats numbered as GitHub does) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const opener = /^\s*(```+|~~~+)/.exec(line);
    if (fence === null && opener) { fence = opener[1]!; continue; }
    if (fence !== null) { if (line.trim().startsWith(fence)) fence = null; continue; }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

/** Relative links of a page that do not resolve inside the repository, as `page:line: target (why)`. */
export function brokenLinks(root: string, page: Page): string[] {
  const problems: string[] = [];
  const lines = proseOf(page.text);
  const pattern = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s+(\S+)/g;
  lines.forEach((line, index) => {
    for (const match of line.matchAll(pattern)) {
      const target = match[1] ?? match[2]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const problem = linkProblem(root, page.path, target);
      if (problem) problems.push(`${page.path}:${index + 1}: ${target} (${problem})`);
    }
  });
  return problems;
}

function linkProblem(root: string, pagePath: string, target: string): string | null {
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = pathPart === '' ? resolve(root, pagePath) : resolve(root, dirname(pagePath), decodeURI(pathPart));
  if (file !== resolve(root) && !file.startsWith(resolve(root) + sep)) return 'outside the repository';
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined) return null;
  if (!file.endsWith('.md') || statSync(file).isDirectory()) return null;
  const anchors = anchorsOf(readFileSync(file, 'utf8'));
  return anchors.has(decodeURIComponent(anchor)) ? null : `no heading #${anchor} in ${relative(root, file)}`;
}

export interface ConfigKey { path: string; leaf: string; line: number }

/** The keys of a YAML config: identifier-named map keys, array items flattened (`auth.keys.id`).
 *  Map keys that are data, not settings (`"team-a/*"`, a model pattern), are skipped; their
 *  children (`rpm`, `prompt`) are still keys. */
export function configKeys(yamlText: string): ConfigKey[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter });
  const keys = new Map<string, ConfigKey>();
  const walk = (node: Node | null | undefined, path: string[]): void => {
    if (isSeq(node)) { for (const item of node.items) walk(item as Node, path); return; }
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      const isSetting = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key);
      const next = isSetting ? [...path, key] : path;
      if (isSetting && !keys.has(next.join('.'))) {
        const offset = isScalar(pair.key) ? (pair.key.range?.[0] ?? 0) : 0;
        keys.set(next.join('.'), { path: next.join('.'), leaf: key, line: lineCounter.linePos(offset).line });
      }
      walk(pair.value as Node, next);
    }
  };
  walk(doc.contents as Node, []);
  return [...keys.values()];
}

/** The words pages show as code: inline spans split at separators, and the keys of fenced lines
 *  (`leaf:`). A key is named when its leaf or a dotted path ending in it (`upstreams.*.maxSockets`)
 *  is one of these words. */
export function codeWords(pages: Page[]): Set<string> {
  const words = new Set<string>();
  for (const { text } of pages) {
    let inFence = false;
    for (const line of text.split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) { inFence = !inFence; continue; }
      if (inFence) {
        for (const key of line.matchAll(/(?:^|[\s{,-])([A-Za-z_][A-Za-z0-9_]*)\s*:/g)) words.add(key[1]!);
        continue;
      }
      for (const span of line.matchAll(/`([^`]+)`/g)) {
        for (const word of span[1]!.split(/[\s,{}()[\]:=|/"'<>]+/)) if (word) words.add(word);
      }
    }
  }
  return words;
}

export function unnamedKeys(keys: ConfigKey[], words: Set<string>): ConfigKey[] {
  const dotted = [...words].filter((word) => word.includes('.'));
  return keys.filter(({ leaf }) => !words.has(leaf) && !dotted.some((word) => word.endsWith(`.${leaf}`)));
}

/** Fenced blocks announced by `<!-- example: path -->` on the line before must equal that file. */
export function staleIncludes(root: string, page: Page): string[] {
  const problems: string[] = [];
  const lines = page.text.split('\n');
  lines.forEach((line, index) => {
    const marker = /^<!--\s*example:\s*(\S+)\s*-->$/.exec(line.trim());
    if (!marker) return;
    const file = join(root, dirname(page.path), marker[1]!);
    const fence = /^(```+)/.exec(lines[index + 1] ?? '');
    if (!fence) { problems.push(`${page.path}:${index + 1}: no code block after the example marker for ${marker[1]}`); return; }
    const end = lines.findIndex((l, i) => i > index + 1 && l.trim() === fence[1]);
    const block = lines.slice(index + 2, end).join('\n') + '\n';
    if (!existsSync(file)) problems.push(`${page.path}:${index + 1}: no file ${marker[1]}`);
    else if (readFileSync(file, 'utf8') !== block) problems.push(`${page.path}:${index + 1}: the block differs from ${marker[1]} (copy the file into the page)`);
  });
  return problems;
}
