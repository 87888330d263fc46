/**
 * Rewrites test/MUTATION.md from Stryker's JSON report (`npm run mutation` runs it after
 * Stryker): the score per folder, then every surviving (or uncovered) mutant with file:line,
 * mutator and replacement. The hand-kept section after the EQUIVALENTS marker (survivors
 * judged equivalent, one line each saying why) is carried over unchanged. A run over one folder
 * (`npm run mutation -- --mutate 'src/limits/*.ts'`) replaces that folder's files in
 * reports/mutation/merged.json, so the summary keeps the folders measured by earlier runs; a
 * folder no report on this machine measured keeps its rows from the previous test/MUTATION.md.
 *
 *   tsx test/mutation-summary.ts [report.json] [MUTATION.md]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { guardFolderOf } from './mutation-folders.js';

interface Mutant {
  readonly id: string;
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly status: string;
  readonly location: { readonly start: { readonly line: number; readonly column: number } };
}
interface Report {
  readonly files: Record<string, { readonly mutants: readonly Mutant[] }>;
}

const EQUIVALENTS_MARKER = '<!-- EQUIVALENTS: kept by hand below this line; the rest of this file is generated -->';
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

export interface FolderScore {
  readonly folder: string;
  readonly killed: number;
  readonly timeout: number;
  readonly survived: number;
  readonly noCoverage: number;
  readonly invalid: number;
  /** (killed + timeout) / (killed + timeout + survived + no coverage), in percent; NaN when there is nothing to score. */
  readonly score: number;
}

/** Stryker's own score per folder: compile and runtime errors and ignored mutants do not count. */
export function scoresByFolder(report: Report): FolderScore[] {
  const folders = new Map<string, { killed: number; timeout: number; survived: number; noCoverage: number; invalid: number }>();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const { folder } = guardFolderOf(relativePath(file));
    const counts = folders.get(folder) ?? { killed: 0, timeout: 0, survived: 0, noCoverage: 0, invalid: 0 };
    for (const mutant of mutants) {
      if (mutant.status === 'Killed') counts.killed++;
      else if (mutant.status === 'Timeout') counts.timeout++;
      else if (mutant.status === 'Survived') counts.survived++;
      else if (mutant.status === 'NoCoverage') counts.noCoverage++;
      else counts.invalid++;
    }
    folders.set(folder, counts);
  }
  return [...folders.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([folder, c]) => {
      const scored = c.killed + c.timeout + c.survived + c.noCoverage;
      return { folder, ...c, score: scored === 0 ? Number.NaN : ((c.killed + c.timeout) / scored) * 100 };
    });
}

/** Every mutant no test detected, by file and line. */
export function undetected(report: Report): Array<{ file: string; line: number; mutator: string; replacement: string; status: string }> {
  const rows = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      if (!UNDETECTED.has(m.status)) continue;
      rows.push({ file: relativePath(file), line: m.location.start.line, mutator: m.mutatorName, replacement: oneLine(m.replacement ?? ''), status: m.status });
    }
  }
  return rows.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.mutator.localeCompare(b.mutator));
}

function relativePath(file: string): string {
  return file.startsWith('/') ? relative(process.cwd(), file) : file;
}

/** A replacement as one short table cell. */
function oneLine(code: string): string {
  const flat = code.replace(/\s+/g, ' ').trim();
  return (flat.length > 60 ? `${flat.slice(0, 57)}...` : flat).replace(/\|/g, '\\|').replace(/`/g, "'");
}

const pct = (score: number): string => (Number.isNaN(score) ? '—' : `${score.toFixed(1)}%`);

/** The files of each folder this report measured: a folder's score covers these, not the files left out. */
function filesByFolder(report: Report): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const file of Object.keys(report.files).map(relativePath).sort()) {
    const { folder, name } = guardFolderOf(file);
    files.set(folder, [...(files.get(folder) ?? []), name]);
  }
  return files;
}

function addScores(a: FolderScore, b: FolderScore): FolderScore {
  const sum = { folder: a.folder, killed: a.killed + b.killed, timeout: a.timeout + b.timeout, survived: a.survived + b.survived, noCoverage: a.noCoverage + b.noCoverage, invalid: a.invalid + b.invalid };
  const scored = sum.killed + sum.timeout + sum.survived + sum.noCoverage;
  return { ...sum, score: scored === 0 ? Number.NaN : ((sum.killed + sum.timeout) / scored) * 100 };
}

/** What the summary already says of a folder: its table row and its undetected mutants' rows. */
interface KeptFolder {
  readonly score: FolderScore;
  readonly files: string;
  readonly undetectedRows: readonly string[];
}

const FOLDER_ROW = /^\| `([^`]+)` \| [^|]+ \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([^|]*) \|$/;
const UNDETECTED_ROW = /^\| `([^`:]+):\d+` \|/;

/**
 * The folders of an earlier summary (its generated part), by folder: a run that did not
 * measure a folder keeps what the last run that did said of it, so per-folder runs on different
 * machines (reports/ is not kept) add up in test/MUTATION.md.
 */
export function foldersOf(summary: string): Map<string, KeptFolder> {
  const kept = new Map<string, { score: FolderScore; files: string; undetectedRows: string[] }>();
  const generated = summary.split(EQUIVALENTS_MARKER)[0] ?? '';
  for (const line of generated.split('\n')) {
    const row = FOLDER_ROW.exec(line);
    if (row) {
      const [killed, timeout, survived, noCoverage, invalid] = row.slice(2, 7).map(Number) as [number, number, number, number, number];
      const scored = killed + timeout + survived + noCoverage;
      const score = { folder: row[1]!, killed, timeout, survived, noCoverage, invalid, score: scored === 0 ? Number.NaN : ((killed + timeout) / scored) * 100 };
      kept.set(row[1]!, { score, files: row[7]!.trim(), undetectedRows: [] });
      continue;
    }
    const mutantRow = UNDETECTED_ROW.exec(line);
    if (mutantRow) kept.get(guardFolderOf(mutantRow[1]!).folder)?.undetectedRows.push(line);
  }
  return kept;
}

export function renderSummary(report: Report, equivalents: string, generatedAt: string, earlier: ReadonlyMap<string, KeptFolder> = new Map()): string {
  const files = filesByFolder(report);
  // An earlier row is kept when this run measured none of its files: alone for a folder this run
  // did not measure, added to this run's counts for one it measured other files of.
  const carried = [...earlier.values()].filter((k) => !k.files.split(', ').some((file) => files.get(k.score.folder)?.includes(file)));
  const byFolder = new Map(scoresByFolder(report).map((s) => [s.folder, s]));
  for (const k of carried) {
    const now = byFolder.get(k.score.folder);
    byFolder.set(k.score.folder, now ? addScores(now, k.score) : k.score);
    files.set(k.score.folder, [...(files.get(k.score.folder) ?? []), ...k.files.split(', ')].sort());
  }
  const scores = [...byFolder.values()].sort((a, b) => a.folder.localeCompare(b.folder));
  const all = scores.reduce((sum, s) => ({ d: sum.d + s.killed + s.timeout, n: sum.n + s.killed + s.timeout + s.survived + s.noCoverage }), { d: 0, n: 0 });
  const left = [
    ...undetected(report).map((m) => ({ key: `${m.file}:${String(m.line).padStart(6, '0')}`, row: `| \`${m.file}:${m.line}\` | ${m.mutator} | \`${m.replacement}\` | ${m.status} |` })),
    ...carried.flatMap((k) => k.undetectedRows.map((row) => ({ key: row.replace(/^\| `([^`:]+):(\d+)`.*$/, (_m, file: string, line: string) => `${file}:${line.padStart(6, '0')}`), row }))),
  ].sort((a, b) => a.key.localeCompare(b.key));
  const lines = [
    '# Mutation testing',
    '',
    `Generated by \`npm run mutation\` (Stryker, then \`test/mutation-summary.ts\`) on ${generatedAt}; do not edit above the marker.`,
    'Score = (killed + timed out) / (killed + timed out + survived + no coverage). Target: 85% per folder.',
    '',
    '| folder | score | killed | timed out | survived | no coverage | not scored (compile errors, static) | files measured |',
    '|---|---|---|---|---|---|---|---|',
    ...scores.map((s) => `| \`${s.folder}\` | ${pct(s.score)} | ${s.killed} | ${s.timeout} | ${s.survived} | ${s.noCoverage} | ${s.invalid} | ${(files.get(s.folder) ?? []).join(', ')} |`),
    `| **all** | **${pct(all.n === 0 ? Number.NaN : (all.d / all.n) * 100)}** | | | | | | |`,
    '',
    `## Mutants no test detected (${left.length})`,
    '',
    'Each is killed by a new test, or listed as equivalent below with one line saying why.',
    '',
    '| where | mutator | replacement | status |',
    '|---|---|---|---|',
    ...left.map((m) => m.row),
    '',
    EQUIVALENTS_MARKER,
  ];
  return `${lines.join('\n')}\n${equivalents}`;
}

const DEFAULT_EQUIVALENTS = '\n## Equivalent mutants\n\n(none judged yet: `file:line mutator — why no test can tell it apart`)\n';

/** The files of earlier runs (kept in `mergedPath`) with this run's files replacing theirs. */
function mergedReport(report: Report, mergedPath: string): Report {
  const earlier = existsSync(mergedPath) ? (JSON.parse(readFileSync(mergedPath, 'utf8')) as Report).files : {};
  const merged: Report = { files: { ...earlier, ...report.files } };
  writeFileSync(mergedPath, JSON.stringify(merged));
  return merged;
}

function main(): void {
  const reportPath = resolve(process.argv[2] ?? 'reports/mutation/mutation.json');
  const outPath = resolve(process.argv[3] ?? 'test/MUTATION.md');
  const report = mergedReport(JSON.parse(readFileSync(reportPath, 'utf8')) as Report, resolve(dirname(reportPath), 'merged.json'));
  const previous = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '';
  const at = previous.indexOf(EQUIVALENTS_MARKER);
  const equivalents = at === -1 ? DEFAULT_EQUIVALENTS : previous.slice(at + EQUIVALENTS_MARKER.length + 1);
  writeFileSync(outPath, renderSummary(report, equivalents, new Date().toISOString().slice(0, 10), foldersOf(previous)));
  for (const s of scoresByFolder(report)) process.stdout.write(`${s.folder.padEnd(20)} ${pct(s.score)}\n`);
  process.stdout.write(`wrote ${relative(process.cwd(), outPath)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
