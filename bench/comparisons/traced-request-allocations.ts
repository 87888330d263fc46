import { tracingSchema } from '../../src/config/index.js';
import { createTracing } from '../../src/tracing/index.js';
import { heapBytesPerCall, medianOfClean } from './heap-bytes.js';
import { tracedChat, type TracedChatStage } from './traced-chat.js';

/**
 * What tracing's own code allocates for one traced chat request, in stages: the SERVER span's
 * start, three steps, the upstream hop (CLIENT span, traceparent, the reply watched), and the
 * end (the record written as OTLP bytes for the export thread). Each stage's figure includes the
 * ones before it; "untraced steps" is the same three steps called directly, what a request
 * allocates for them anyway. Heap bytes per request over batches in which no GC ran:
 *
 *   tsc -p tsconfig.bench.json && node --min-semi-space-size=128 --max-semi-space-size=128 dist/bench/comparisons/traced-request-allocations.js
 */

const STAGES: readonly TracedChatStage[] = ['start', 'untraced steps', 'steps', 'upstream', 'end'];

const config = tracingSchema.parse({ enabled: true, endpoint: 'http://127.0.0.1:9', sampleRatio: 1, maxQueueSize: 100_000_000 });
const tracing = createTracing(config, { spansDropped: () => undefined })!;

/** Bytes allocated per request over `n` requests, or NaN when a GC ran meanwhile. */
const bytesPerRequest = (stage: TracedChatStage, n: number): Promise<number> => heapBytesPerCall(() => tracedChat(tracing, stage), n);

async function main(): Promise<void> {
  for (let warm = 0; warm < 20; warm++) for (const stage of STAGES) await bytesPerRequest(stage, 500);
  const samples = new Map<TracedChatStage, number[]>(STAGES.map((stage) => [stage, []]));
  for (let round = 0; round < 8; round++) for (const stage of STAGES) samples.get(stage)!.push(await bytesPerRequest(stage, 500));

  process.stdout.write('| up to | bytes per traced request |\n|---|--:|\n');
  for (const stage of STAGES) process.stdout.write(`| ${stage} | ${medianOfClean(samples.get(stage)!).toFixed(0)} |\n`);
  process.exit(0);
}

void main();
