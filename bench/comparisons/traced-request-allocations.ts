import type { IncomingMessage } from 'node:http';
import { tracingSchema } from '../../src/config/tracing.js';
import type { ResponseTap, TapResult } from '../../src/metering/index.js';
import { createTracing, type RequestTrace } from '../../src/tracing/index.js';
import { heapBytesPerCall, medianOfClean } from './heap-bytes.js';

/**
 * What tracing's own code allocates for one traced chat request, in stages: the SERVER span's
 * start, three steps, the upstream hop (CLIENT span, traceparent, the reply watched), and the
 * end (the record written as OTLP bytes for the export thread). Each stage's figure includes the
 * ones before it; "untraced steps" is the same three steps called directly, what a request
 * allocates for them anyway. Heap bytes per request over batches in which no GC ran:
 *
 *   tsc -p tsconfig.bench.json && node --min-semi-space-size=128 --max-semi-space-size=128 dist/bench/comparisons/traced-request-allocations.js
 */

type Stage = 'start' | 'untraced steps' | 'steps' | 'upstream' | 'end';
const STAGES: readonly Stage[] = ['start', 'untraced steps', 'steps', 'upstream', 'end'];

const config = tracingSchema.parse({ enabled: true, endpoint: 'http://127.0.0.1:9', sampleRatio: 1, maxQueueSize: 100_000_000 });
const tracing = createTracing(config, { spansDropped: () => undefined })!;
const reply = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    model: 'OpenPipe/Qwen3-14B-Instruct',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how can I help you today?' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 },
  }),
);
const request = { headers: { 'user-agent': 'bench', 'content-type': 'application/json' }, url: '/v1/chat/completions' } as IncomingMessage;
const tapResult = { tail: null, usage: null, invalidUsage: false, model: null, contentChunks: 0 } as unknown as TapResult;
const meteringTap: ResponseTap = { rewrites: false, write: (chunk) => chunk, end: () => tapResult } as ResponseTap;

const auth = async (): Promise<number> => 1;
const validate = async (): Promise<number> => 2;
const admit = async (): Promise<{ checks: string[] }> => ({ checks: ['key:rpm'] });
const describeAdmission = () => ({ 'tollgate.limits.decision': 'admitted', 'tollgate.limits.scopes': ['key'], 'tollgate.limits.checks': ['key:rpm'] });

async function oneRequest(stage: Stage): Promise<void> {
  const trace: RequestTrace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
  if (stage === 'start') return;
  if (stage === 'untraced steps') {
    await auth();
    await validate();
    await admit();
    return;
  }
  await trace.step('auth', auth);
  await trace.step('validate', validate);
  await trace.step('limits', admit, describeAdmission);
  if (stage === 'steps') return;
  trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'OpenPipe/Qwen3-14B-Instruct', sampling: { maxTokens: 64 }, raw: undefined } });
  trace.injectInto({});
  trace.upstreamAnswered(200);
  const watched = trace.watchReply(meteringTap, false);
  watched.write(reply);
  watched.end();
  if (stage === 'upstream') return;
  trace.finish({ status: 200, team: 'research', project: 'bench', keyId: 'k_bench', costNanos: 123_000, inputTokens: 12, outputTokens: 20, responseModel: 'OpenPipe/Qwen3-14B-Instruct', aborted: false });
}

/** Bytes allocated per request over `n` requests, or NaN when a GC ran meanwhile. */
const bytesPerRequest = (stage: Stage, n: number): Promise<number> => heapBytesPerCall(() => oneRequest(stage), n);

async function main(): Promise<void> {
  for (let warm = 0; warm < 20; warm++) for (const stage of STAGES) await bytesPerRequest(stage, 500);
  const samples = new Map<Stage, number[]>(STAGES.map((stage) => [stage, []]));
  for (let round = 0; round < 8; round++) for (const stage of STAGES) samples.get(stage)!.push(await bytesPerRequest(stage, 500));

  process.stdout.write('| up to | bytes per traced request |\n|---|--:|\n');
  for (const stage of STAGES) process.stdout.write(`| ${stage} | ${medianOfClean(samples.get(stage)!).toFixed(0)} |\n`);
  process.exit(0);
}

void main();
