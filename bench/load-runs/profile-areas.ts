import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { summarizeProfile, type CpuProfile, type FrameTime } from './profile-summary.js';

/**
 * Where a process's CPU goes per request, by area (Node's HTTP machinery, socket writes, GC,
 * http-proxy-3, each src/ folder, each library), for profiles of the same run side by side:
 * `node dist/bench/load-runs/profile-areas.js proxy=<file>:<CPU µs/req> gateway-redis=<file>:<CPU µs/req> …`
 * (run from the repository root, so src/ locations read as such). Each area's share of the
 * profile's busy time, start-up (module loading) left out, is scaled by the CPU µs per request
 * the bench measured for that process: the main thread's profile stands for the whole process.
 */

/** Start-up, not request work: compiling and loading modules. */
const STARTUP = /node:internal\/modules\/|^(wrapSafe|compileSourceTextModule|compileFunction|internalModuleStat|realpathSync|openFileHandle|readFileUtf8|fstat)\b/;

const LIBRARIES: readonly [RegExp, string][] = [
  [/node_modules\/(ioredis|redis-parser|standard-as-callback|denque|cluster-key-slot)\//, 'ioredis'],
  [/node_modules\/prom-client\//, 'prom-client'],
  [/node_modules\/(pino|@pinojs|sonic-boom|fast-redact|quick-format-unescaped|thread-stream)\//, 'pino (request log)'],
  [/node_modules\/(kysely|better-sqlite3)\//, 'kysely, better-sqlite3 (ledger)'],
  [/node_modules\/http-proxy-3\//, 'http-proxy-3'],
  [/node_modules\/(@opentelemetry)\//, 'OpenTelemetry'],
];

/** The area a frame's self time counts toward, or undefined for start-up work. */
export function areaOf(frame: Pick<FrameTime, 'name' | 'location'>): string | undefined {
  const { name, location } = frame;
  if (STARTUP.test(location) || STARTUP.test(name)) return undefined;
  if (name === '(garbage collector)') return 'garbage collector';
  if (location === '—') {
    if (/^write(v|Buffer|String|Utf8String|Latin1String|AsciiString)$/.test(name)) return 'socket writes (syscalls)';
    if (name === '(program)' || name === 'runMicrotasks') return 'V8 and event loop (program, microtasks)';
    return 'native: other';
  }
  const src = /(?:^|\/)src\/([^/:]+)/.exec(location);
  if (src && !location.includes('node_modules')) return `src/${src[1]!}`;
  for (const [pattern, area] of LIBRARIES) if (pattern.test(location)) return area;
  if (/^node:(_http_|http|net|events|internal\/streams|internal\/stream_base|stream|internal\/http)/.test(location)) return 'Node HTTP, net, streams, events';
  if (/^node:internal\/(process\/task_queues|async_hooks|timers)|^node:timers/.test(location)) return 'V8 and event loop (program, microtasks)';
  if (/(^|\/)bench\//.test(location)) return 'bench (stats requests)';
  return 'Node: other';
}

export interface AreaProfile {
  readonly name: string;
  readonly profile: CpuProfile;
  readonly cpuMicrosPerRequest: number;
}

/** µs per request by area, per profile, areas ordered by the last profile's cost. */
export function areasTable(profiles: readonly AreaProfile[]): string {
  const perProfile = profiles.map(({ profile, cpuMicrosPerRequest }) => {
    const byArea = new Map<string, number>();
    let busy = 0;
    for (const frame of summarizeProfile(profile).frames) {
      const area = areaOf(frame);
      if (area === undefined) continue;
      busy += frame.selfMicros;
      byArea.set(area, (byArea.get(area) ?? 0) + frame.selfMicros);
    }
    return new Map([...byArea].map(([area, micros]) => [area, (micros / busy) * cpuMicrosPerRequest]));
  });
  const last = perProfile[perProfile.length - 1]!;
  const areas = [...new Set(perProfile.flatMap((m) => [...m.keys()]))].sort((a, b) => (last.get(b) ?? 0) - (last.get(a) ?? 0));
  const lines = [`| area | ${profiles.map((p) => `${p.name} µs/req`).join(' | ')} |`, `|---|${profiles.map(() => '--:').join('|')}|`];
  for (const area of areas) lines.push(`| ${area} | ${perProfile.map((m) => (m.get(area) ?? 0).toFixed(1)).join(' | ')} |`);
  lines.push(`| **all** | ${profiles.map((p) => `**${p.cpuMicrosPerRequest.toFixed(1)}**`).join(' | ')} |`);
  return lines.join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  if (args.length === 0) {
    process.stderr.write('usage: node dist/bench/load-runs/profile-areas.js <name>=<file.cpuprofile>:<CPU µs/req> …\n');
    process.exit(2);
  }
  const profiles = args.map((arg) => {
    const [name, rest] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    const [file, micros] = [rest.slice(0, rest.lastIndexOf(':')), Number(rest.slice(rest.lastIndexOf(':') + 1))];
    return { name, profile: JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, cpuMicrosPerRequest: micros };
  });
  process.stdout.write(areasTable(profiles) + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
