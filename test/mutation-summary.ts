/**
 * Rewrites test/MUTATION.md from Stryker's JSON report (`npm run mutation` runs it after
 * Stryker): the score per folder and per file, then every surviving (or uncovered) mutant with
 * file:line, mutator and replacement. The hand-kept section after the EQUIVALENTS marker
 * (survivors judged equivalent, one line each saying why) is carried over unchanged.
 *
 * Runs add up file by file: a run over some files (`npm run mutation -- --mutate
 * src/limits/plan.ts`) replaces those files' rows and their undetected mutants, and every other
 * row of the previous test/MUTATION.md is kept, so per-file runs on different machines (reports/
 * is not kept) make one summary. A row may name several files (an earlier run's total that was
 * not split by file): it is kept until a run measures one of them again.
 *
 *   tsx test/mutation-summary.ts [report.json] [MUTATION.md]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
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
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** What one row of the per-file table measured: one file, or (kept from earlier summaries) several together. */
export interface MeasuredFiles {
  readonly files: readonly string[];
  /** Killed or timed out. */
  readonly detected: number;
  /** Survived or not covered by any test. */
  readonly undetected: number;
  /** The rows of the undetected-mutants table that belong to these files. */
  readonly undetectedRows: readonly string[];
}

export interface FolderScore {
  readonly folder: string;
  readonly detected: number;
  readonly undetected: number;
  /** detected / (detected + undetected), in percent (Stryker's score: compile errors and static mutants do not count); NaN with nothing to score. */
  readonly score: number;
  readonly files: readonly string[];
}

const scoreOf = (detected: number, undetected: number): number => (detected + undetected === 0 ? Number.NaN : (detected / (detected + undetected)) * 100);
const pct = (score: number): string => (Number.isNaN(score) ? '—' : `${score.toFixed(1)}%`);

function relativePath(file: string): string {
  return file.startsWith('/') ? relative(process.cwd(), file) : file;
}

/** A replacement as one short table cell. */
function oneLine(code: string): string {
  const flat = code.replace(/\s+/g, ' ').trim();
  return (flat.length > 60 ? `${flat.slice(0, 57)}...` : flat).replace(/\|/g, '\\|').replace(/`/g, "'");
}

const undetectedRow = (file: string, m: Mutant): string => `| \`${file}:${m.location.start.line}\` | ${m.mutatorName} | \`${oneLine(m.replacement ?? '')}\` | ${m.status} |`;

/** Each file of a report with its counts and its undetected mutants (by line, then mutator). */
export function measuredFilesOf(report: Report): MeasuredFiles[] {
  return Object.entries(report.files)
    .map(([path, { mutants }]) => {
      const file = relativePath(path);
      const left = mutants.filter((m) => UNDETECTED.has(m.status)).sort((a, b) => a.location.start.line - b.location.start.line || a.mutatorName.localeCompare(b.mutatorName));
      return { files: [file], detected: mutants.filter((m) => DETECTED.has(m.status)).length, undetected: left.length, undetectedRows: left.map((m) => undetectedRow(file, m)) };
    })
    .sort((a, b) => a.files[0]!.localeCompare(b.files[0]!));
}

/** Rows summed by the folder of test/mutation-folders.json their files belong to (a subfolder's file counts with its folder). */
export function scoresByFolder(measured: readonly MeasuredFiles[]): FolderScore[] {
  const folders = new Map<string, { detected: number; undetected: number; files: string[] }>();
  for (const row of measured) {
    for (const file of row.files) {
      const { folder, name } = guardFolderOf(file);
      const sum = folders.get(folder) ?? { detected: 0, undetected: 0, files: [] };
      sum.files.push(name);
      folders.set(folder, sum);
    }
    const sum = folders.get(guardFolderOf(row.files[0]!).folder)!;
    sum.detected += row.detected;
    sum.undetected += row.undetected;
  }
  return [...folders.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([folder, s]) => ({ folder, detected: s.detected, undetected: s.undetected, score: scoreOf(s.detected, s.undetected), files: s.files.sort() }));
}

const FILE_ROW = /^\| ((?:`[^`]+`(?:, )?)+) \| [^|]+ \| (\d+) \| (\d+) \|$/;
const UNDETECTED_ROW = /^\| `([^`:]+):\d+` \|/;

/** The per-file rows of an earlier summary, each with its undetected mutants' rows. */
export function measuredFilesOfSummary(summary: string): MeasuredFiles[] {
  const generated = summary.split(EQUIVALENTS_MARKER)[0] ?? '';
  const rows: Array<MeasuredFiles & { undetectedRows: string[] }> = [];
  const rowOfFile = new Map<string, { undetectedRows: string[] }>();
  for (const line of generated.split('\n')) {
    const fileRow = FILE_ROW.exec(line);
    if (fileRow) {
      const row = { files: [...fileRow[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), detected: Number(fileRow[2]), undetected: Number(fileRow[3]), undetectedRows: [] };
      rows.push(row);
      for (const file of row.files) rowOfFile.set(file, row);
      continue;
    }
    const mutantRow = UNDETECTED_ROW.exec(line);
    if (mutantRow) rowOfFile.get(mutantRow[1]!)?.undetectedRows.push(line);
  }
  return rows;
}

export function renderSummary(report: Report, equivalents: string, generatedAt: string, earlier: readonly MeasuredFiles[] = []): string {
  const now = measuredFilesOf(report);
  const measuredNow = new Set(now.flatMap((row) => row.files));
  const rows = [...now, ...earlier.filter((row) => !row.files.some((file) => measuredNow.has(file)))].sort((a, b) => a.files[0]!.localeCompare(b.files[0]!));
  const folders = scoresByFolder(rows);
  const total = rows.reduce((sum, row) => ({ detected: sum.detected + row.detected, undetected: sum.undetected + row.undetected }), { detected: 0, undetected: 0 });
  const left = rows.flatMap((row) => row.undetectedRows);
  const lines = [
    '# Mutation testing',
    '',
    `Generated by \`npm run mutation\` (Stryker, then \`test/mutation-summary.ts\`) on ${generatedAt}; do not edit above the marker.`,
    'Score = detected (killed + timed out) / (detected + undetected (survived + no coverage)); compile errors and static mutants do not count. Target: 85% per folder.',
    '',
    '| folder | score | detected | undetected | files measured |',
    '|---|---|---|---|---|',
    ...folders.map((f) => `| \`${f.folder}\` | ${pct(f.score)} | ${f.detected} | ${f.undetected} | ${f.files.join(', ')} |`),
    `| **all** | **${pct(scoreOf(total.detected, total.undetected))}** | ${total.detected} | ${total.undetected} | |`,
    '',
    '### Per file',
    '',
    'A row naming several files is an earlier run\'s total for them together.',
    '',
    '| files | score | detected | undetected |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.files.map((file) => `\`${file}\``).join(', ')} | ${pct(scoreOf(row.detected, row.undetected))} | ${row.detected} | ${row.undetected} |`),
    '',
    `## Mutants no test detected (${left.length})`,
    '',
    'Each is killed by a new test, or listed as equivalent below with one line saying why.',
    '',
    '| where | mutator | replacement | status |',
    '|---|---|---|---|',
    ...left,
    '',
    EQUIVALENTS_MARKER,
  ];
  return `${lines.join('\n')}\n${equivalents}`;
}

const DEFAULT_EQUIVALENTS = '\n## Equivalent mutants\n\n(none judged yet: `file:line mutator — why no test can tell it apart`)\n';

function main(): void {
  const reportPath = resolve(process.argv[2] ?? 'reports/mutation/mutation.json');
  const outPath = resolve(process.argv[3] ?? 'test/MUTATION.md');
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const previous = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '';
  const at = previous.indexOf(EQUIVALENTS_MARKER);
  const equivalents = at === -1 ? DEFAULT_EQUIVALENTS : previous.slice(at + EQUIVALENTS_MARKER.length + 1);
  writeFileSync(outPath, renderSummary(report, equivalents, new Date().toISOString().slice(0, 10), measuredFilesOfSummary(previous)));
  for (const row of measuredFilesOf(report)) process.stdout.write(`${row.files[0]!.padEnd(48)} ${pct(scoreOf(row.detected, row.undetected))}\n`);
  process.stdout.write(`wrote ${relative(process.cwd(), outPath)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
