import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuPerRequest, findRow, ratiosByRound, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';

/**
 * `--tracing`: what tracing costs the hot path (SPEC 18). Three fresh gateway-redis processes, the
 * same but for `tracing` (off; on at sampleRatio 1.0; on at 0.1, a production setting), the
 * traced ones exporting every sampled span over OTLP/HTTP to a collector in this process that
 * reads each export and answers 200, measured with the bare proxy in interleaved rounds.
 */

/** SPEC 18's bounds: the share of requests/s tracing may cost, by sample ratio. */
const MAX_COST_AT_FULL = 0.15;
const MAX_COST_AT_TENTH = 0.03;

/** A chat request's spans: SERVER, auth, validate, ownership (the bench gateways check the chat model's owner), limits, CLIENT. */
const SPANS_PER_CHAT = 6;

interface TracingCounts {
  readonly dropped: number;
  readonly chatRequests: number;
}

/**
 * From one scrape of the gateway's /metrics: spans dropped (0 before the first drop) and chat
 * requests answered (summed over the request counter's series of the chat route).
 */
export async function tracingCounts(target: Target): Promise<TracingCounts> {
  const lines = (await (await fetch(`${target.url}/metrics`)).text()).split('\n');
  const valueOf = (line: string): number => Number(line.slice(line.lastIndexOf(' ') + 1));
  const dropped = lines.find((l) => l.startsWith('tollgate_trace_spans_dropped_total ') || l.startsWith('tollgate_trace_spans_dropped_total{'));
  const chatRequests = lines
    .filter((l) => l.startsWith('tollgate_requests_total{') && l.includes('route="/v1/chat/completions"'))
    .reduce((sum, l) => sum + valueOf(l), 0);
  return { dropped: dropped === undefined ? 0 : valueOf(dropped), chatRequests };
}

/** After a run: once the last batch had time to leave, spans dropped (queue full, a failed export) against spans made (per chat request), since `before`. */
export async function spansDroppedSince(traced: Target, before: TracingCounts): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await tracingCounts(traced);
  const spansMade = (after.chatRequests - before.chatRequests) * SPANS_PER_CHAT;
  return `${(after.dropped - before.dropped).toLocaleString('en-US')} of ${spansMade.toLocaleString('en-US')} spans dropped`;
}

export const OFF = 'tracing off';
export const ON = 'tracing on (ratio 1.0)';
export const ON_TENTH = 'tracing on (ratio 0.1)';

/** Each traced row against tracing off, with the bound its ratio has (rows missing are left out). */
export function onVersusOffTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  if (!findRow(rows, OFF)) return `(no ${OFF} row)`;
  const lines = [
    '| traced gateway | req/s on ÷ off | req/s on ÷ off per round | tracing cost (1 − on ÷ off) | CPU µs/req on − off | CPU µs/req on ÷ off | bound | within |',
    '|:--|--:|--:|--:|--:|--:|--:|:-:|',
  ];
  for (const [name, bound] of [[ON, MAX_COST_AT_FULL], [ON_TENTH, MAX_COST_AT_TENTH]] as const) {
    const on = findRow(rows, name);
    if (!on) continue;
    const requests = roundRatio(rows, on, OFF, requestsPerSec);
    const cost = 1 - requests;
    lines.push(
      `| ${name} | ${ratio(requests)} | ${ratiosByRound(rows, on, OFF, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
        `${signedMicros(roundDifference(rows, on, OFF, cpuPerRequest))} | ${ratio(roundRatio(rows, on, OFF, cpuPerRequest))} | ≤ ${bound * 100}% | ${cost <= bound ? '✓' : '✗'} |`,
    );
  }
  return lines.join('\n');
}

/** A collector that takes every export (bytes counted, not decoded: its CPU is not the gateway's). */
export async function startSink(): Promise<{ url: string; exports: () => number; close(): void }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => exports, close: () => void server.close() };
}

/** Two fresh gateway-redis processes, every other feature on in both: tracing off, and on at ratio 1.0 exporting to `collector`. */
export async function startTracingPair(stack: Stack, collector: string): Promise<[Target, Target]> {
  return [await startGatewayTarget(stack, 'redis', { name: OFF }), await startGatewayTarget(stack, 'redis', { name: ON, tracingEndpoint: collector })];
}

/** The pair, and a third gateway the same but for tracing at ratio 0.1 (a production setting). */
export async function startTracingTrio(stack: Stack, collector: string): Promise<[Target, Target, Target]> {
  return [...(await startTracingPair(stack, collector)), await startGatewayTarget(stack, 'redis', { name: ON_TENTH, tracingEndpoint: collector, tracingRatio: 0.1 })];
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureTracingCost(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const sink = await startSink();
  const gateways = await startTracingTrio(stack, sink.url);
  log(`tracing cost: ${[proxy, ...gateways].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(gateways, { connections: settings.connections, durationSec: settings.warmup });
  const started = performance.now();
  const exportsBefore = sink.exports();
  const traced = gateways[1]!;
  const before = await tracingCounts(traced);
  const rows = await measureRounds([proxy, ...gateways], settings);
  const exportsPerSecond = ((sink.exports() - exportsBefore) * 1000) / (performance.now() - started);
  const dropped = await spansDroppedSince(traced, before);
  for (const target of gateways) await target.process?.stop();
  sink.close();
  return [
    `${OFF}, ${ON} and ${ON_TENTH}: three fresh gateway-redis processes (every other feature on in all); the traced ones send every sampled span, batched by the SDK's BatchSpanProcessor, to a collector in the bench process (${exportsPerSecond.toFixed(1)} exports/s from both over the whole run; at ratio 1.0, ${dropped}).`,
    versusProxyTable(rows),
    'Tracing on vs off (each ratio taken within a round, then the median over rounds):',
    onVersusOffTable(rows),
  ].join('\n\n');
}
