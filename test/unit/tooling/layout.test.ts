import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The house as docs/development.md draws it: every folder of src/ on the map, no import circles
 * between files or folders, config/ a leaf, and other folders, bench/ and test/ entering a
 * folder of src/ only through its index.ts.
 */

const ROOT = resolve(import.meta.dirname, '../../..');
const SRC = join(ROOT, 'src');

/** Known file circles: none. */
const KNOWN_FILE_CIRCLES: readonly string[] = [];

/**
 * Known imports below another folder's index.ts, or from test/ into bench/, each to be dropped
 * when its cause goes: the chat worker's body check takes forced stream usage from its own file,
 * as metering/index.ts would load the ledger and the store into every worker (and a 10 MB body
 * then no longer fits the worker's 512 MB heap);  * console-volume.ts is a bench run that docs/console-ui.md names by its path under test/browser/
 * (it moves to bench/console/ together with that page).
 */
const KNOWN_BELOW_INDEX: readonly string[] = [
  'validation/chat-facts.ts -> metering/force-stream-usage.ts',
];
const KNOWN_BENCH_FROM_TESTS: readonly string[] = [
  'test/browser/console-volume.ts -> bench/console/results-section.ts',
  'test/browser/console-volume.ts -> bench/processes/machine.ts',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The repository paths a file imports (static, dynamic, re-exports), relative ones only. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolveImport(file, spec))
    .filter((target): target is string => target !== undefined);
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec).replace(/\.(js|mjs)$/, '');
  const candidates = [`${base}.ts`, `${base}.tsx`, `${base}.mts`, join(base, 'index.ts')];
  return candidates.find((path) => SOURCE_SET.has(path));
}

const SOURCES = [...sourceFiles(SRC), ...sourceFiles(join(ROOT, 'test')), ...sourceFiles(join(ROOT, 'bench'))];
const SOURCE_SET = new Set(SOURCES);
const rel = (path: string): string => relative(ROOT, path);
const srcFiles = SOURCES.filter((path) => rel(path).startsWith('src/'));
const GRAPH = new Map(srcFiles.map((file) => [rel(file).slice('src/'.length), importsOf(file).filter((t) => rel(t).startsWith('src/')).map((t) => rel(t).slice('src/'.length))]));

/** Strongly connected components of more than one node (Tarjan): each is a circle. */
function circles(edges: ReadonlyMap<string, Iterable<string>>): string[] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== node);
    if (members.length > 1) found.push(members.sort().join(' '));
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found.sort();
}

/** A file's folder under src/ (`store/core`), or the file itself when it sits directly in src/. */
const folderOf = (file: string): string => (file.includes('/') ? dirname(file) : file);
const topFolderOf = (file: string): string => file.split('/')[0]!;

/** What `from` reaches through its imports, itself excluded. */
function reach(from: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...(GRAPH.get(from) ?? [])];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...(GRAPH.get(file) ?? []));
  }
  return seen;
}

/** The folders and files directly under src/ that the layout block of docs/development.md names. */
function documentedLayout(): string[] {
  const text = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
  const block = /## Layout[\s\S]*?```\n([\s\S]*?)```/.exec(text)?.[1];
  if (block === undefined) throw new Error('docs/development.md has no layout block');
  const lines = block.split('\n');
  const start = lines.indexOf('src/');
  const entries: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const entry = /^ {2}(\S+)/.exec(line);
    if (!entry) break;
    entries.push(entry[1]!);
  }
  return entries.sort();
}

describe('the house (docs/development.md)', () => {
  it('lists every folder and file directly in src/ in the layout, and nothing that is not there', () => {
    const actual = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .sort();
    expect(documentedLayout()).toEqual(actual);
  });

  it('has no import circle between files of src/ but the known ones', () => {
    expect(circles(GRAPH)).toEqual(KNOWN_FILE_CIRCLES);
  });

  it('has no import circle between folders of src/', () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of GRAPH) {
      const from = folderOf(file);
      const edges = folders.get(from) ?? new Set<string>();
      folders.set(from, edges);
      // A folder reaching into its own subfolders is one concern; a subfolder reaching back up is a circle.
      for (const target of targets) if (folderOf(target) !== from && !folderOf(target).startsWith(`${from}/`)) edges.add(folderOf(target));
    }
    expect(circles(folders)).toEqual([]);
  });

  it('keeps config/ a leaf: it reads only the rules below it (project names, the limit-kinds table, route templates, JSON pointers), never another concern', () => {
    const reached = new Set<string>();
    for (const file of GRAPH.keys()) if (file.startsWith('config/')) for (const target of reach(file)) reached.add(folderOf(target));
    reached.delete('config');
    expect([...reached].sort()).toEqual(['error-catalogue.ts', 'errors.ts', 'json-pointer.ts', 'limit-kinds', 'money.ts', 'projects', 'route-template.ts']);
  });

  it('enters another folder of src/ only through its index.ts', () => {
    const below = [...GRAPH].flatMap(([file, targets]) =>
      targets.filter((t) => t.includes('/') && topFolderOf(t) !== topFolderOf(file) && !t.endsWith('/index.ts')).map((t) => `${file} -> ${t}`),
    );
    expect(below.sort()).toEqual(KNOWN_BELOW_INDEX);
  });

  it('has the chat worker load only the body check: validation, Python JSON and forced stream usage, nothing of the store or the ledger', () => {
    const folders = new Set([...reach('validation/chat-worker.ts')].map((file) => (file.startsWith('metering/') ? file : topFolderOf(file))));
    expect([...folders].sort()).toEqual(['metering/force-stream-usage.ts', 'metering/taps/json-scan.ts', 'python-json', 'validation']);
  });

  it('has bench/ and test/ use src/ only through the index.ts of its folders (or a file directly in src/), and tests never import bench/', () => {
    const outside = SOURCES.filter((path) => /^(bench|test)\//.test(rel(path)));
    const below: string[] = [];
    const benchFromTests: string[] = [];
    for (const file of outside) {
      for (const target of importsOf(file).map(rel)) {
        const publicSurface = /^src\/[^/]+\.ts$/.test(target) || /^src\/[^/]+\/index\.ts$/.test(target);
        if (target.startsWith('src/') && !publicSurface) below.push(`${rel(file)} -> ${target}`);
        if (rel(file).startsWith('test/') && target.startsWith('bench/')) benchFromTests.push(`${rel(file)} -> ${target}`);
      }
    }
    expect(below).toEqual([]);
    expect(benchFromTests.sort()).toEqual(KNOWN_BENCH_FROM_TESTS);
  });
});
