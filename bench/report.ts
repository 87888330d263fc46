import { median, type LoadSample, type StreamSample } from './load.js';

/** Turns per-round samples into the markdown tables printed and written to RESULTS.md. */

export interface TargetRounds {
  readonly name: string;
  /** One sample per round, in round order (every target has the same number). */
  readonly rounds: LoadSample[];
}

const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
const int = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * Median over rounds. Ratios are taken within each round first (target vs direct, target vs
 * proxy measured minutes apart, not hours) and then their median is reported.
 */
function roundRatio(rows: readonly TargetRounds[], target: TargetRounds, base: string, pick: (s: LoadSample) => number): number {
  const reference = rows.find((row) => row.name === base);
  if (!reference) return Number.NaN;
  return median(target.rounds.map((sample, i) => pick(sample) / pick(reference.rounds[i]!)));
}

export function loadTable(rows: readonly TargetRounds[]): string {
  const lines = [
    '| target | req/s | p50 ms | p99 ms | req/s vs direct | req/s vs proxy | p50 vs direct | p50 vs proxy | req/s per round | failed |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const rps = (s: LoadSample): number => s.requestsPerSec;
  const p50 = (s: LoadSample): number => s.p50;
  for (const row of rows) {
    const failures = row.rounds.reduce((sum, s) => sum + s.failures, 0);
    lines.push(
      `| ${row.name} | ${int(median(row.rounds.map(rps)))} | ${ms(median(row.rounds.map(p50)))} | ${ms(median(row.rounds.map((s) => s.p99)))} | ` +
        `${ratio(roundRatio(rows, row, 'direct', rps))} | ${ratio(roundRatio(rows, row, 'proxy', rps))} | ` +
        `${ratio(roundRatio(rows, row, 'direct', p50))} | ${ratio(roundRatio(rows, row, 'proxy', p50))} | ` +
        `${row.rounds.map((s) => int(s.requestsPerSec)).join(' / ')} | ${failures} |`,
    );
  }
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
  readonly streamTable: string;
}

/** bench/RESULTS.md: what was run where, the two tables, and how to read them. */
export function resultsDocument(run: RunDescription): string {
  return `# Benchmark results

Produced by \`bench/run.ts\` (\`npm run bench\`), which rewrites this file after a full run.

- **Machine:** ${run.machine}
- **Date:** ${run.date}
- **Command:** \`${run.command}\`
- **Settings:** ${run.settings}

## Non-streaming chat (\`POST /v1/chat/completions\`, ~320-byte body)

${run.loadTable}

## Streaming chat (time to first chunk, sequential requests)

${run.streamTable}

## What the rows are

- **direct** — the load generator talks straight to the fake upstream: the ceiling of this machine.
- **proxy** — a bare \`http-proxy-3\` ProxyServer with a keep-alive \`http.Agent\` in front of the
  upstream: the floor of this stack (the cheapest hop a Node proxy can add). No checks at all.
- **gateway-memory** — Tollgate with every feature on: static key (SHA-256 lookup),
  \`OpenAI-Project\` header, chat validation, limits on the key and on two team/project entries
  (rpm, tpm, concurrency, tokensPerDay; set far above the load so they are checked, never hit),
  token reservation and settlement, usage metering with \`forceStreamUsage\`, Prometheus metrics;
  in-memory store.
- **gateway-redis** — the same with the Redis store (a private \`redis-server\`, no persistence):
  every admission and settlement is a round trip to Redis.

Every target runs in its own process; the fake upstream runs in another, the load generator
(autocannon) in the parent. All share the machine's cores, so absolute numbers say more about the
machine than about Tollgate — **read the ratios**, which compare rows measured in the same run,
round by round.

## How to read the ratios

- **req/s vs direct / vs proxy** — throughput as a fraction of that row: \`0.50×\` means half the
  requests per second. *vs proxy* is what Tollgate's features cost on top of the unavoidable hop.
- **p50 vs direct / vs proxy** — median latency as a multiple of that row: \`2.00×\` means twice
  as long. Under a fixed number of connections, latency and throughput move together.
- **req/s per round** — the spread: rounds are interleaved (every target once per round, starting
  target rotated), and each ratio is computed within a round before taking the median.
- **failed** — non-2xx responses plus connection errors over all rounds; any non-zero value makes
  the row invalid (e.g. a limit was hit or the store failed: the Redis gateway runs with
  \`onStoreError: closed\`, so a Redis failure shows up here rather than as a silent fall-back).
- **first chunk** — time from sending a \`stream: true\` request to the first body bytes. The
  upstream writes the first SSE event at once and the next ones every millisecond, so a gateway that
  buffered the stream would show the whole stream's time here instead of one hop's.
`;
}
