import type { StreamSample } from './load.js';
import type { TargetRounds } from './measure.js';
import {
  cpuPerRequest,
  failuresOf,
  findRow,
  medianOf,
  p50,
  p99,
  ratiosByRound,
  redisCallsByCommand,
  redisCallsPerRequest,
  redisCpuPerRequest,
  requestsPerSec,
  roundDifference,
  roundRatio,
} from './figures.js';

/** Turns per-round samples into the markdown tables printed and written to RESULTS.md. */

export const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
export const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
export const int = (value: number): string => Math.round(value).toLocaleString('en-US');
/** Bytes as MiB, one decimal. */
export const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
/** A cost that does not apply to the row (CPU of direct, Redis of a memory-store row) is a dash. */
export const micros = (value: number): string => (Number.isFinite(value) ? value.toFixed(1) : '—');
/** A difference in µs with its sign (`+12.3`, `-4.0`; `—` when there is none). */
export const signedMicros = (value: number): string => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(1)}` : '—');
const calls = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '—');

export function loadTable(rows: readonly TargetRounds[]): string {
  const lines = [
    '| target | req/s | p50 ms | p99 ms | req/s vs direct | req/s vs proxy | p50 vs direct | p50 vs proxy | p99 vs proxy | CPU µs/req | Redis cmds/req | Redis CPU µs/req | req/s per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of rows) {
    const failures = failuresOf(row);
    lines.push(
      `| ${row.name} | ${int(medianOf(row, requestsPerSec))} | ${ms(medianOf(row, p50))} | ${ms(medianOf(row, p99))} | ` +
        `${ratio(roundRatio(rows, row, 'direct', requestsPerSec))} | ${ratio(roundRatio(rows, row, 'proxy', requestsPerSec))} | ` +
        `${ratio(roundRatio(rows, row, 'direct', p50))} | ${ratio(roundRatio(rows, row, 'proxy', p50))} | ${ratio(roundRatio(rows, row, 'proxy', p99))} | ` +
        `${micros(medianOf(row, cpuPerRequest))} | ${calls(medianOf(row, redisCallsPerRequest))} | ${micros(medianOf(row, redisCpuPerRequest))} | ` +
        `${row.rounds.map((s) => int(s.requestsPerSec)).join(' / ')} | ${failures} |`,
    );
  }
  return lines.join('\n');
}


/**
 * A comparison's rows, measured in rounds of their own (bench/comparisons/: baseline-compare.ts,
 * ledger-cost.ts, events-polling.ts), each held to the bare proxy of the same rounds.
 */
export function versusProxyTable(rows: readonly TargetRounds[]): string {
  const lines = [
    '| target | req/s | p50 ms | p99 ms | req/s vs proxy | p99 vs proxy | CPU µs/req | Redis cmds/req | Redis CPU µs/req | req/s per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.name} | ${int(medianOf(row, requestsPerSec))} | ${ms(medianOf(row, p50))} | ${ms(medianOf(row, p99))} | ` +
        `${ratio(roundRatio(rows, row, 'proxy', requestsPerSec))} | ${ratio(roundRatio(rows, row, 'proxy', p99))} | ` +
        `${micros(medianOf(row, cpuPerRequest))} | ${calls(medianOf(row, redisCallsPerRequest))} | ${micros(medianOf(row, redisCpuPerRequest))} | ` +
        `${row.rounds.map((s) => int(s.requestsPerSec)).join(' / ')} | ${failuresOf(row)} |`,
    );
  }
  return lines.join('\n');
}

/** Two rows of one comparison set against each other: `row` (e.g. gateway-redis) over `base` (baseline-redis). */
export interface Pairing {
  readonly label: string;
  readonly row: string;
  readonly base: string;
}

/**
 * One line per pairing: req/s and p99 of `row` over `base`, each round's pair measured side by
 * side (median of the per-round ratios, and the ratios themselves), and CPU µs/req `row` − `base`.
 * `names` says what the rows and bases are in the headings ("gateway", "baseline").
 */
export function pairTable(rows: readonly TargetRounds[], pairings: readonly Pairing[], names: { readonly row: string; readonly base: string; readonly label: string }): string {
  const { row: a, base: b } = names;
  const lines = [
    `| ${names.label} | req/s ${a} ÷ ${b} | p99 ${a} ÷ ${b} | CPU µs/req ${a} − ${b} | CPU µs/req ${a} ÷ ${b} | req/s ${a} ÷ ${b} per round |`,
    '|---|--:|--:|--:|--:|--:|',
  ];
  for (const pairing of pairings) {
    const row = findRow(rows, pairing.row);
    if (!row || !findRow(rows, pairing.base)) continue;
    const cpuDifference = roundDifference(rows, row, pairing.base, cpuPerRequest);
    lines.push(
      `| ${pairing.label} | ${ratio(roundRatio(rows, row, pairing.base, requestsPerSec))} | ${ratio(roundRatio(rows, row, pairing.base, p99))} | ` +
        `${signedMicros(cpuDifference)} | ${ratio(roundRatio(rows, row, pairing.base, cpuPerRequest))} | ` +
        `${ratiosByRound(rows, row, pairing.base, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} |`,
    );
  }
  return lines.join('\n');
}

/** Commands that run a Lua script: one per gateway call; the commands the script runs are listed too. */
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** Per-command Redis calls per request of one row, over all its rounds; the busiest first. */
export function redisBreakdownTable(rows: readonly TargetRounds[], name: string, top = 12): string {
  const row = findRow(rows, name);
  if (!row) return `(no ${name} row)`;
  const commands = [...redisCallsByCommand(row)].sort((a, b) => b[1].callsPerRequest - a[1].callsPerRequest);
  const lines = ['| command | calls/req | µs per call (in Redis) |', '|---|--:|--:|'];
  for (const [command, usage] of commands.slice(0, top)) {
    const label = SCRIPT_COMMANDS.has(command) ? `${command} (runs a Lua script)` : command;
    lines.push(`| ${label} | ${calls(usage.callsPerRequest)} | ${micros(usage.usecPerCall)} |`);
  }
  const perRequest = (list: typeof commands): number => list.reduce((sum, [, usage]) => sum + usage.callsPerRequest, 0);
  if (commands.length > top) lines.push(`| ${commands.length - top} other commands | ${calls(perRequest(commands.slice(top)))} | |`);
  lines.push(`| **all commands** | **${calls(perRequest(commands))}** | |`);
  return lines.join('\n');
}

export function streamTable(names: readonly string[], samples: readonly StreamSample[]): string {
  const index = (name: string): number => names.indexOf(name);
  const direct = samples[index('direct')];
  const proxy = samples[index('proxy')];
  const lines = [
    '| target | first chunk p50 ms | first chunk p99 ms | first chunk vs direct | first chunk vs proxy | whole stream p50 ms | failed |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  names.forEach((name, i) => {
    const s = samples[i]!;
    lines.push(
      `| ${name} | ${ms(s.firstChunkP50)} | ${ms(s.firstChunkP99)} | ${ratio(direct ? s.firstChunkP50 / direct.firstChunkP50 : Number.NaN)} | ` +
        `${ratio(proxy ? s.firstChunkP50 / proxy.firstChunkP50 : Number.NaN)} | ${ms(s.totalP50)} | ${s.failures} |`,
    );
  });
  return lines.join('\n');
}

export interface RunDescription {
  readonly machine: string;
  readonly date: string;
  readonly command: string;
  readonly settings: string;
  readonly loadTable: string;
  readonly redisTable: string;
  readonly streamTable: string;
  readonly targetsTable: string;
  /** The sections of the flag-gated measurements (`--cpu-prof`, `--cluster`, …), markdown, or ''. */
  readonly extras: string;
}

/** bench/RESULTS.md: what was run where, the tables, and how to read them. */
export function resultsDocument(run: RunDescription): string {
  return `# Benchmark results

Produced by \`bench/run.ts\` (\`npm run bench\`), which rewrites this file after a full run.

- **Machine:** ${run.machine}
- **Date:** ${run.date}
- **Command:** \`${run.command}\`
- **Settings:** ${run.settings}

## Non-streaming chat (\`POST /v1/chat/completions\`, ~320-byte body)

${run.loadTable}

## Redis commands per gateway-redis request (all rounds)

${run.redisTable}

## Streaming chat (time to first chunk, sequential requests)

${run.streamTable}

## Targets

${run.targetsTable}
${run.extras ? `\n${run.extras}` : ''}
## What the rows are

- **direct** — the load generator talks straight to the fake upstream: the ceiling of this machine.
- **proxy** — a bare \`http-proxy-3\` ProxyServer with a keep-alive \`http.Agent\` in front of the
  upstream: the floor of this stack (the cheapest hop a Node proxy can add). No checks at all.
- **gateway-memory** — Tollgate with every feature on: static key (SHA-256 lookup),
  \`OpenAI-Project\` header, chat validation, limits on the key and on two team/project entries
  (rpm, tpm, concurrency, tokensPerDay, costPerDay, costPerMonth; set far above the load so they
  are checked, never hit), token and cost reservation and settlement, prices, usage metering with
  \`forceStreamUsage\`, the usage ledger (a SQLite file of its own), ownership checks of the chat
  model (\`mode: on\`), a request log line per request at \`info\` (to /dev/null), Prometheus
  metrics; in-memory store.
- **gateway-redis** — the same with the Redis store (a private \`redis-server\`, no persistence):
  every admission and settlement is a round trip to Redis.

Every target runs in its own process; the fake upstream runs in another, the load generator
(autocannon) in the parent. All share the machine's cores, so absolute numbers say more about the
machine than about Tollgate — **read the ratios**, which compare rows measured in the same run,
round by round.

## How to read the ratios

- **req/s vs direct / vs proxy** — throughput as a fraction of that row: \`0.50×\` means half the
  requests per second. *vs proxy* is what Tollgate's features cost on top of the unavoidable hop.
- **p50 vs direct / vs proxy, p99 vs proxy** — latency as a multiple of that row: \`2.00×\` means
  twice as long. Under a fixed number of connections, latency and throughput move together.
- **CPU µs/req** — CPU time (user + system) of the target's own process during the measured run,
  per request (\`process.cpuUsage()\` asked over the fork IPC channel before and after; not for
  direct). req/s falls whenever other work takes the cores; CPU per request measures the work
  itself (though a busy machine's cache and frequency effects still show in it).
- **Redis cmds/req, Redis CPU µs/req** — for Redis-store rows: \`INFO commandstats\` calls (the
  commands Lua scripts run inside Redis count too; the probe's own \`INFO\` does not) and
  \`INFO cpu\` \`used_cpu_user + used_cpu_sys\`, both as deltas over the measured run, per request.
  Redis is shared by every gateway instance, so its CPU per request bounds the whole fleet. The
  breakdown table lists calls per request by command, pooled over all rounds, and Redis's own
  execution time per call (commandstats \`usec\`; a script's includes the commands it runs).
- **req/s per round** — the spread: rounds are interleaved (every target once per round, starting
  target rotated), and each ratio is computed within a round before taking the median.
- **failed** — non-2xx responses plus connection errors over all rounds; any non-zero value makes
  the row invalid (e.g. a limit was hit or the store failed: the Redis gateway runs with
  \`onStoreError: closed\`, so a Redis failure shows up here rather than as a silent fall-back).
- **first chunk** — time from sending a \`stream: true\` request to the first body bytes. The
  upstream writes the first SSE event at once and the next ones every millisecond, so a gateway that
  buffered the stream would show the whole stream's time here instead of one hop's.
- **Targets** — the goals of issue 22 (performance, second pass; bench/load-runs/performance-targets.ts),
  each with this run's value: ✓ met, ✗ not met.
- **CPU profile** (\`--cpu-prof\`) — the top 20 self-time frames of the bare proxy and of each
  gateway process (and of its worker threads) over the whole run, warm-up and extra measurements
  included. **CPU per request by area** puts them side by side: each area's share of a process's
  busy main thread (start-up left out) times that process's median CPU µs per request. The
  ratios each change was kept for are in [HISTORY.md](HISTORY.md).
`;
}
