import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuPerRequest, findRow, ratiosByRound, requestsPerSec, roundDifference, roundRatio } from '../load-runs/figures.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { ratio, signedMicros, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack } from '../load-runs/stack.js';
import { threadsAtRate } from './tracing-threads.js';

/**
 * `--export`: what the usage export (SPEC 24) costs the hot path. Two fresh gateway-redis
 * processes, the same but for a `notifications.export` sink (a CloudEvents receiver on loopback
 * in this process, answering 200), measured with the bare proxy in interleaved rounds. The export
 * reads the ledger behind a cursor on a timer, so the request path should not see it.
 */

/** The bound: export on within 5% of off in requests/s. */
const EXPORT_MAX_COST = 0.05;

const ON = 'gateway-redis, export on';
const OFF = 'gateway-redis';

const SPECVERSION = Buffer.from('"specversion":');

/** Occurrences of `needle` in `body`. */
function occurrences(body: Buffer, needle: Buffer): number {
  let count = 0;
  for (let at = body.indexOf(needle); at >= 0; at = body.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/**
 * Counts the CloudEvents it is sent (one `"specversion":` each), answering 200. It shares this
 * process with the load generator, so it does not parse the batches: a billing system's CPU is
 * not the gateway's (as the tracing comparison's collector).
 */
async function startSink(): Promise<{ url: string; events: () => number; close: () => void }> {
  let events = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      events += occurrences(Buffer.concat(chunks), SPECVERSION);
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/events`, events: () => events, close: () => server.close() };
}

function onVersusOffTable(rows: Parameters<typeof versusProxyTable>[0]): string {
  const on = findRow(rows, ON);
  if (!on || !findRow(rows, OFF)) return `(no ${ON} or ${OFF} row)`;
  const requests = roundRatio(rows, on, OFF, requestsPerSec);
  const cost = 1 - requests;
  return [
    `| req/s on ÷ off | req/s on ÷ off per round | export cost (1 − on ÷ off) | CPU µs/req on − off | CPU µs/req on ÷ off | cost < ${EXPORT_MAX_COST * 100}% of req/s |`,
    '|--:|--:|--:|--:|--:|:-:|',
    `| ${ratio(requests)} | ${ratiosByRound(rows, on, OFF, requestsPerSec).map((value) => value.toFixed(2)).join(' / ')} | ${(cost * 100).toFixed(1)}% | ` +
      `${signedMicros(roundDifference(rows, on, OFF, cpuPerRequest))} | ${ratio(roundRatio(rows, on, OFF, cpuPerRequest))} | ${cost < EXPORT_MAX_COST ? '✓' : '✗'} |`,
  ].join('\n');
}

/** `proxy`: the main run's bare proxy, already warm. */
export async function measureExportCost(stack: Stack, proxy: Target, settings: Settings): Promise<string> {
  const sink = await startSink();
  const pair = [await startGatewayTarget(stack, 'redis', { name: ON, exportUrl: sink.url }), await startGatewayTarget(stack, 'redis', { name: OFF })];
  if (settings.rate > 0) {
    // Off first: the table's differences are on − off.
    const { table } = await threadsAtRate([pair[1]!, pair[0]!], settings, settings.rate);
    sink.close();
    return [
      `${OFF} and ${ON} at a fixed ${settings.rate} req/s (${settings.connections} connections, ${settings.rounds} rounds of ${settings.duration} s, rotating; the sink received ${sink.events()} events): CPU µs per request of each gateway process, read per thread from /proc (the export worker is among the other threads).`,
      table,
    ].join('\n\n');
  }
  log(`export cost: ${[proxy, ...pair].map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(pair, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds([proxy, ...pair], settings);
  for (const target of pair) await target.process?.stop();
  sink.close();
  return [
    `${ON} and ${OFF}: two fresh gateway-redis processes, the same but for a \`notifications.export\` sink on loopback (batch 500, every ledger row sent; the sink received ${sink.events()} events).`,
    versusProxyTable(rows),
    'Export on vs off (each ratio taken within a round, then the median over rounds):',
    onVersusOffTable(rows),
  ].join('\n\n');
}
