import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * The top self-time frames of a V8 `.cpuprofile` (what `npm run bench -- --cpu-prof` writes) as
 * a markdown table: `node dist/bench/load-runs/profile-summary.js <file.cpuprofile> [--top 15]`.
 * Frames are aggregated by function and location (the same function reached through different
 * callers is one row). Locations in built files (dist/…/*.js) are mapped back to the .ts source
 * through the .js.map beside them. Self % is of the busy time: `(idle)` is left out of the
 * table and of the base, since a gateway idles while the other targets are measured.
 */

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based, like columnNumber: where the function starts. */
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

export interface FrameTime {
  readonly name: string;
  readonly location: string;
  readonly selfMicros: number;
}

export interface ProfileSummary {
  /** Busiest first, `(idle)` excluded. */
  readonly frames: readonly FrameTime[];
  readonly totalMicros: number;
  readonly idleMicros: number;
}

/** Each sample lasts until the next one is taken (the last until endTime), as DevTools counts it. */
function selfMicrosByNode(profile: CpuProfile): Map<number, number> {
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const self = new Map<number, number>();
  let time = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    time += deltas[i] ?? 0;
    const next = i + 1 < samples.length ? time + (deltas[i + 1] ?? 0) : profile.endTime;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + Math.max(0, next - time));
  }
  return self;
}

const sourceMaps = new Map<string, SourceMap | undefined>();

function sourceMapFor(file: string): SourceMap | undefined {
  if (!sourceMaps.has(file)) {
    const mapFile = `${file}.map`;
    sourceMaps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload) : undefined);
  }
  return sourceMaps.get(file);
}

/** `path:line` (1-based), relative to the working directory when inside it; .ts when mapped. */
function locationOf(frame: CallFrame): string {
  if (!frame.url) return '—';
  if (!frame.url.startsWith('file:')) return `${frame.url}:${frame.lineNumber + 1}`;
  let file = fileURLToPath(frame.url);
  let line = frame.lineNumber;
  const entry = sourceMapFor(file)?.findEntry(frame.lineNumber, frame.columnNumber);
  if (entry && 'originalSource' in entry) {
    file = resolve(dirname(file), entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : entry.originalSource);
    line = entry.originalLine;
  }
  const shown = relative(process.cwd(), file);
  return `${shown.startsWith('..') || isAbsolute(shown) ? file : shown}:${line + 1}`;
}

export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const self = selfMicrosByNode(profile);
  const byFrame = new Map<string, FrameTime>();
  let idleMicros = 0;
  for (const node of profile.nodes) {
    const micros = self.get(node.id) ?? 0;
    if (micros === 0) continue;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleMicros += micros;
      continue;
    }
    const location = locationOf(node.callFrame);
    const key = `${name}\u0000${location}`;
    byFrame.set(key, { name, location, selfMicros: (byFrame.get(key)?.selfMicros ?? 0) + micros });
  }
  const frames = [...byFrame.values()].sort((a, b) => b.selfMicros - a.selfMicros);
  return { frames, totalMicros: profile.endTime - profile.startTime, idleMicros };
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

export function summaryTable(summary: ProfileSummary, top: number): string {
  const busy = summary.totalMicros - summary.idleMicros;
  const lines = ['| function | location | self ms | self % |', '|---|---|--:|--:|'];
  for (const frame of summary.frames.slice(0, top)) {
    const share = busy > 0 ? (100 * frame.selfMicros) / busy : Number.NaN;
    lines.push(`| ${cell(frame.name)} | ${cell(frame.location)} | ${(frame.selfMicros / 1000).toFixed(1)} | ${share.toFixed(1)}% |`);
  }
  return lines.join('\n');
}

/**
 * Whose profile a file is: Node names them CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile,
 * thread '0' being the process's main thread.
 */
export function profileFileOwner(file: string): { readonly pid: number; readonly thread: string } {
  const parts = file.split('.');
  return { pid: Number(parts[3]), thread: parts[4] ?? '' };
}

/** A one-line account of the profile's time, then the table. */
export function summarizeProfileFile(path: string, top: number): string {
  const summary = summarizeProfile(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile);
  const ms = (micros: number): string => `${(micros / 1000).toFixed(0)} ms`;
  const busy = summary.totalMicros - summary.idleMicros;
  return `${basename(path)}: ${ms(summary.totalMicros)} profiled, ${ms(summary.idleMicros)} idle, ${ms(busy)} busy (self % is of busy time)\n\n${summaryTable(summary, top)}`;
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '15' } } });
  const top = Number(values.top);
  if (positionals.length === 0 || !Number.isInteger(top) || top < 1) {
    process.stderr.write('usage: node dist/bench/load-runs/profile-summary.js <file.cpuprofile> [more.cpuprofile …] [--top 15]\n');
    process.exit(2);
  }
  process.stdout.write(positionals.map((path) => summarizeProfileFile(path, top)).join('\n\n') + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
