import { readFileSync } from 'node:fs';
import { tracingSchema } from '../../src/config/index.js';
import { createTracing } from '../../src/tracing/index.js';
import { median } from '../load-runs/load.js';
import { tracedChat, type TracedChatStage } from './traced-chat.js';

/**
 * What tracing's own calls cost the request thread for one traced chat request, in a loop: the
 * request thread's CPU (this thread's, from /proc/thread-self/schedstat, in ns) for requests
 * through tracing's calls up to their end (their records shipped to the export thread, whose CPU
 * is not counted here; `export-thread-cpu.ts` counts it), less the same untraced steps, and each
 * stage's share. In a loop the code and its data stay in the CPU's caches, so the figures are
 * what the work costs at best; inside the gateway it costs more (docs/tracing.md, "Cost"). The
 * kernel updates a running thread's CPU time at scheduler ticks (4 ms here), so a round of
 * REQUESTS reads to ~0.1 µs a request.
 *
 *   tsc -p tsconfig.bench.json && node dist/bench/comparisons/traced-request-cpu.js
 */

const REQUESTS = 50_000;
const ROUNDS = 10;
const WARM_ROUNDS = 2;

const config = tracingSchema.parse({ enabled: true, endpoint: 'http://127.0.0.1:9', sampleRatio: 1, maxQueueSize: 100_000_000 });
const tracing = createTracing(config, { spansDropped: () => undefined })!;

/** This thread's CPU time so far, ns (Linux). */
const threadNanos = (): number => Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);

/** This thread's CPU µs a request, for REQUESTS requests up to `stage`. */
async function microsPerRequest(stage: TracedChatStage): Promise<number> {
  const started = threadNanos();
  for (let i = 0; i < REQUESTS; i++) await tracedChat(tracing, stage);
  return (threadNanos() - started) / REQUESTS / 1000;
}

const STAGES: readonly TracedChatStage[] = ['untraced steps', 'start', 'steps', 'upstream', 'end'];
const samples = new Map<TracedChatStage, number[]>(STAGES.map((stage) => [stage, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const stage of STAGES) {
    const micros = await microsPerRequest(stage);
    if (round >= WARM_ROUNDS) samples.get(stage)!.push(micros);
  }
}
const at = (stage: TracedChatStage): number => median(samples.get(stage)!);
const untraced = at('untraced steps');
const rows: [string, number][] = [
  ['the SERVER span starts (ids, sampler, attributes)', at('start')],
  ['three steps marked, beyond the untraced steps', at('steps') - untraced],
  ['the upstream hop (CLIENT span, traceparent, the reply watched)', at('upstream') - at('steps')],
  ['the end (record built, written for the export thread, shipped)', at('end') - at('upstream')],
  ['**a traced request, in all** (end less the untraced steps)', at('end') - untraced],
];
process.stdout.write(
  `Tracing's own calls on the request thread, CPU µs a traced chat request (medians of ${ROUNDS - WARM_ROUNDS} rounds of ${REQUESTS} requests):\n\n| part | µs |\n|---|--:|\n${rows.map(([name, micros]) => `| ${name} | ${micros.toFixed(2)} |`).join('\n')}\n`,
);
process.exit(0);
