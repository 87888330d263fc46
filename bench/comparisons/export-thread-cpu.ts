import { getPriority } from 'node:os';
import { tracingSchema } from '../../src/config/index.js';
import { createTracing } from '../../src/tracing/index.js';
import { median } from '../load-runs/load.js';
import { cpuAtNice } from '../processes/thread-cpu.js';
import { startSink } from './tracing-cost.js';
import { tracedChat } from './traced-chat.js';

/**
 * The export thread's CPU per traced chat request, alone: requests driven through tracing's own
 * calls at a fixed rate (2,000/s in 10 ms slices), their spans exported to a collector in this
 * process that answers 200, and the thread's CPU read from /proc (it is the one thread 10 nice
 * steps below the process). Steadier than the gateway's on − off, which carries every other
 * thread's noise: for work on what the export thread does with a request's bytes.
 *
 *   tsc -p tsconfig.bench.json && node dist/bench/comparisons/export-thread-cpu.js
 */

const RATE = 2000;
const SECONDS = 8;
const ROUNDS = 5;

const sink = await startSink();
let dropped = 0;
const config = tracingSchema.parse({ enabled: true, endpoint: sink.url, sampleRatio: 1 });
const tracing = createTracing(config, { spansDropped: (count) => void (dropped += count) })!;
const exportNice = Math.min(19, getPriority() + 10);

/** Drives requests for `seconds` at RATE; how many. */
async function drive(seconds: number): Promise<number> {
  const perSlice = RATE / 100;
  const end = Date.now() + seconds * 1000;
  let requests = 0;
  while (Date.now() < end) {
    for (let i = 0; i < perSlice; i++) await tracedChat(tracing);
    requests += perSlice;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return requests;
}

await drive(3);
const perRequest: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const before = cpuAtNice(process.pid, exportNice);
  const requests = await drive(SECONDS);
  // What was shipped in the last slice is taken and sent within the export delay.
  await new Promise((resolve) => setTimeout(resolve, 600));
  perRequest.push((cpuAtNice(process.pid, exportNice) - before) / requests);
}
process.stdout.write(
  `export thread: ${median(perRequest).toFixed(1)} CPU µs a traced chat request (median of ${ROUNDS} rounds of ${SECONDS} s at ${RATE}/s: ${perRequest.map((v) => v.toFixed(1)).join(' / ')}), ${sink.exports()} exports, ${dropped} spans dropped\n`,
);
sink.close();
process.exit(0);
