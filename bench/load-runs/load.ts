import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { CHAT_PATH, CHAT_REQUEST, REQUEST_HEADERS, STREAM_BODY, type LoadRequest } from './workload.js';

/** One measured load run against one target. Latencies in milliseconds. */
export interface LoadSample {
  readonly requestsPerSec: number;
  readonly p50: number;
  readonly p99: number;
  /** Responses received (2xx or not): what CPU and Redis costs are divided by. */
  readonly requests: number;
  /** Responses that were not 2xx plus connection errors/timeouts: must be 0 for a valid row. */
  readonly failures: number;
}

export interface LoadOptions {
  readonly connections: number;
  readonly durationSec: number;
  /** Stop after this many requests instead of after `durationSec` (the memory soak). */
  readonly amount?: number;
  /** Send at most this many requests a second over all connections (a fixed load, below saturation), instead of as fast as answered. */
  readonly rate?: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Drives `baseUrl` with `workload` (POST /v1/chat/completions unless told otherwise) from
 * `connections` keep-alive connections for `durationSec` (or `amount` requests). Latencies are taken from autocannon's per-response timings (float ms) rather
 * than its histogram, whose 1 ms resolution is too coarse for loopback.
 */
export function runLoad(baseUrl: string, options: LoadOptions, workload: LoadRequest = CHAT_REQUEST): Promise<LoadSample> {
  const latencies: number[] = [];
  let ok = 0;
  let notOk = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl + workload.path,
        method: workload.method,
        headers: workload.headers,
        ...(workload.body === undefined ? {} : { body: workload.body }),
        connections: options.connections,
        duration: options.durationSec,
        ...(options.amount === undefined ? {} : { amount: options.amount }),
        ...(options.rate === undefined ? {} : { overallRate: options.rate }),
        pipelining: 1,
        timeout: 10,
      },
      (err, result) => {
        if (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        latencies.sort((a, b) => a - b);
        resolve({
          requestsPerSec: ok / result.duration,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          requests: ok + notOk,
          failures: notOk + result.errors,
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTime);
      } else {
        notOk++;
      }
    });
  });
}

/** One streamed completion: time to the first body chunk and to the end, in ms. */
interface StreamTiming {
  readonly firstChunk: number;
  readonly total: number;
  readonly ok: boolean;
}

function streamOnce(baseUrl: string, agent: Agent): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstChunk = -1;
    let text = '';
    const req = request(baseUrl + CHAT_PATH, { method: 'POST', agent, headers: { ...REQUEST_HEADERS, 'content-length': Buffer.byteLength(STREAM_BODY) } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (firstChunk < 0) firstChunk = performance.now() - started;
        text += chunk;
      });
      res.on('end', () => {
        const ok = res.statusCode === 200 && text.endsWith('data: [DONE]\n\n');
        resolve({ firstChunk, total: performance.now() - started, ok });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(STREAM_BODY);
  });
}

export interface StreamSample {
  readonly firstChunkP50: number;
  readonly firstChunkP99: number;
  readonly totalP50: number;
  readonly failures: number;
}

/**
 * `count` sequential streaming requests per target, interleaved (one to each target in turn)
 * so that machine noise lands on every target alike. One keep-alive connection per target.
 */
export async function measureStreams(baseUrls: readonly string[], count: number): Promise<StreamSample[]> {
  const agents = baseUrls.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const timings: StreamTiming[][] = baseUrls.map(() => []);
  try {
    for (let i = 0; i < count; i++) {
      for (let t = 0; t < baseUrls.length; t++) timings[t]!.push(await streamOnce(baseUrls[t]!, agents[t]!));
    }
  } finally {
    for (const agent of agents) agent.destroy();
  }
  return timings.map((list) => {
    const good = list.filter((timing) => timing.ok);
    const first = good.map((timing) => timing.firstChunk).sort((a, b) => a - b);
    const total = good.map((timing) => timing.total).sort((a, b) => a - b);
    return { firstChunkP50: percentile(first, 50), firstChunkP99: percentile(first, 99), totalP50: percentile(total, 50), failures: list.length - good.length };
  });
}
