import type { StreamSample } from './load.js';
import type { TargetRounds } from './measure.js';
import { micros, ratio } from './report.js';
import { findRow, medianOf, p99, redisCallsPerRequest, redisCpuPerRequest, requestsPerSec, roundRatio } from './figures.js';

/**
 * The targets of issue 22 (performance, second pass: every feature on, against a bare
 * http-proxy-3 proxy in the same run), checked against this run. Each gateway row is held to
 * the proxy ratios (the memory store must meet them too: it may be no slower than Redis).
 */

export const TARGETS = {
  /** Gateway requests/s at least this fraction of the bare proxy's. */
  requestsVsProxy: 0.6,
  /** Gateway p99 at most this multiple of the bare proxy's. */
  p99VsProxy: 2,
  /** Streaming time to first chunk (p50) at most this multiple of the bare proxy's. */
  firstChunkVsProxy: 1.3,
  /** Redis CPU per gateway request, µs: Redis is shared by the fleet, this bounds it. */
  redisCpuMicrosPerRequest: 35,
  /** Redis commands per gateway request (those a Lua script runs count too). */
  redisCommandsPerRequest: 5,
  /** Memory-store requests/s at least this multiple of the Redis store's. */
  memoryVsRedis: 1,
} as const;

interface Check {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

function gatewayChecks(rows: readonly TargetRounds[], row: TargetRounds, firstChunkVsProxy: number): Check[] {
  const requests = roundRatio(rows, row, 'proxy', requestsPerSec);
  const tail = roundRatio(rows, row, 'proxy', p99);
  const checks: Check[] = [
    { target: `${row.name} req/s ≥ ${ratio(TARGETS.requestsVsProxy)} proxy`, measured: ratio(requests), met: requests >= TARGETS.requestsVsProxy },
    { target: `${row.name} p99 ≤ ${ratio(TARGETS.p99VsProxy)} proxy`, measured: ratio(tail), met: tail <= TARGETS.p99VsProxy },
    { target: `${row.name} first chunk ≤ ${ratio(TARGETS.firstChunkVsProxy)} proxy`, measured: ratio(firstChunkVsProxy), met: firstChunkVsProxy <= TARGETS.firstChunkVsProxy },
  ];
  const redisCpu = medianOf(row, redisCpuPerRequest);
  if (Number.isFinite(redisCpu)) {
    const limit = TARGETS.redisCpuMicrosPerRequest;
    checks.push({ target: `${row.name} Redis CPU ≤ ${limit} µs/req`, measured: `${micros(redisCpu)} µs`, met: redisCpu <= limit });
    const commands = medianOf(row, redisCallsPerRequest);
    const most = TARGETS.redisCommandsPerRequest;
    checks.push({ target: `${row.name} Redis commands ≤ ${most}/req`, measured: commands.toFixed(2), met: commands <= most });
  }
  return checks;
}

/** The targets table (target | measured | met) and whether every target was met. */
export function targetsTable(rows: readonly TargetRounds[], streamNames: readonly string[], streams: readonly StreamSample[]): { table: string; allMet: boolean } {
  const proxyStream = streams[streamNames.indexOf('proxy')];
  const checks: Check[] = [];
  for (const row of rows.filter((r) => r.name.startsWith('gateway'))) {
    const stream = streams[streamNames.indexOf(row.name)];
    const firstChunk = stream && proxyStream ? stream.firstChunkP50 / proxyStream.firstChunkP50 : Number.NaN;
    checks.push(...gatewayChecks(rows, row, firstChunk));
  }
  const memory = findRow(rows, 'gateway-memory');
  if (memory && findRow(rows, 'gateway-redis')) {
    const memoryVsRedis = roundRatio(rows, memory, 'gateway-redis', requestsPerSec);
    checks.push({ target: 'gateway-memory req/s ≥ gateway-redis req/s', measured: ratio(memoryVsRedis), met: memoryVsRedis >= TARGETS.memoryVsRedis });
  }
  const lines = ['| target | measured | met |', '|---|--:|:-:|', ...checks.map((c) => `| ${c.target} | ${c.measured} | ${c.met ? '✓' : '✗'} |`)];
  return { table: lines.join('\n'), allMet: checks.every((c) => c.met) };
}
