/**
 * `npm run bench:tracing-loop`: tracing's own CPU a request, in one process, without the gateway:
 * the spans a chat request makes (SERVER, four steps, the CLIENT hop, traceparent injected) through
 * the SDK's BatchSpanProcessor and OTLP exporter to a collector on loopback, beside ~30 KB of
 * short-lived objects a request (about what the gateway allocates), so that the garbage
 * collector works as it does in the gateway: queued spans survive its scavenges and are copied.
 * Prints CPU µs a request (the main thread's median; the whole process's min and median of 5
 * rounds) for tracing off, ratio 1.0, 0.1 and 0; then the SDK's own floor (bench/tracing-floor.ts).
 * Run it with node flags (e.g. `--max-semi-space-size=64`) to see what they change.
 * Flags: --requests N a round (20000).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { tracingSchema } from '../src/config/index.js';
import { createTracing, type Tracing } from '../src/tracing/index.js';
import { tracingFloor } from './tracing-floor.js';
import { threadCpu } from './processes/thread-cpu.js';

const REQUEST = { headers: { 'user-agent': 'openai/5', host: 'gateway' }, url: '/v1/chat/completions' } as unknown as IncomingMessage;
const LIMITS = { 'tollgate.limits.decision': 'admitted', 'tollgate.limits.scopes': ['key'], 'tollgate.limits.checks': ['key:rpm'] };
const OUTCOME = { status: 200, team: 'team-a', project: 'p1', keyId: 'k1', costNanos: 1234, inputTokens: 10, outputTokens: 20, responseModel: 'm', aborted: false };
/** Requests a turn of the event loop, as a busy gateway answers several a turn. */
const PER_TURN = 30;

/** What a request's handling allocates besides tracing, kept across a few requests. */
let recent: unknown[] = [];
function churn(): void {
  const garbage: unknown[] = [];
  for (let i = 0; i < 300; i++) garbage.push({ a: i, b: `x${i}`, c: [i, i] });
  recent.push(garbage);
  if (recent.length > 32) recent = [];
}

function oneRequest(tracing: Tracing | undefined): void {
  churn();
  if (tracing) traceOneRequest(tracing);
}

/** A chat request's calls on its RequestTrace, as the pipeline makes them. */
function traceOneRequest(tracing: Tracing): void {
  const trace = tracing.startRequest(REQUEST, '/v1/chat/completions', 'POST');
  for (const step of ['auth', 'validate', 'ownership'] as const) {
    trace.begin(step);
    trace.end();
  }
  trace.begin('limits');
  trace.end(LIMITS, (attributes) => attributes);
  trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'm', sampling: { maxTokens: 16, temperature: 0.5 } as never, raw: undefined } });
  trace.injectInto({});
  trace.upstreamAnswered(200);
  trace.finish(OUTCOME);
}

async function drive(tracing: Tracing | undefined, requests: number): Promise<void> {
  for (let i = 0; i < requests; i += PER_TURN) {
    for (let j = 0; j < PER_TURN; j++) oneRequest(tracing);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function measure(name: string, endpoint: string, ratio: number | undefined, requests: number): Promise<string> {
  const config = tracingSchema.parse({ enabled: ratio !== undefined, endpoint, sampleRatio: ratio ?? 1 });
  const tracing = createTracing(config, { spansDropped: () => undefined });
  await drive(tracing, 5000);
  const rounds: number[] = [];
  const mainRounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const before = threadCpu(process.pid);
    await drive(tracing, requests);
    // The last batch leaves on the processor's timer: its export counts too.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = threadCpu(process.pid);
    const main = after.mainMicros - before.mainMicros;
    mainRounds.push(main / requests);
    rounds.push((main + after.otherMicros - before.otherMicros) / requests);
  }
  await tracing?.close(Date.now() + 2000);
  rounds.sort((a, b) => a - b);
  mainRounds.sort((a, b) => a - b);
  return `| ${name} | ${mainRounds[2]!.toFixed(1)} | ${rounds[0]!.toFixed(1)} | ${rounds[2]!.toFixed(1)} | ${rounds.map((r) => r.toFixed(0)).join(' / ')} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' } } });
  const requests = Number(values.requests);
  const collector = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  const rows = [];
  for (const [name, ratio] of [['tracing off', undefined], ['ratio 1.0', 1], ['ratio 0.1', 0.1], ['ratio 0', 0]] as const) {
    rows.push(await measure(name, endpoint, ratio, requests));
  }
  collector.close();
  const flags = process.execArgv.filter((flag) => !flag.includes('tsx') && flag !== '--import').join(' ') || 'none';
  process.stdout.write(
    [`Tracing in a loop, ${requests} requests a round (node flags: ${flags}): CPU µs a request (/proc, 10 ms ticks)`, '| tracing | main thread, median | whole process, min | median | rounds |', '|---|--:|--:|--:|--:|', ...rows, '', tracingFloor(traceOneRequest)].join('\n') + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:tracing-loop: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
