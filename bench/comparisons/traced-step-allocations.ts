import { heapBytesPerCall, medianOfClean } from './heap-bytes.js';
import { traced } from '../../src/pipeline/traced.js';
import type { RequestTrace } from '../../src/tracing/index.js';

/**
 * Does tracing off allocate per request? The pipeline's `run` (src/pipeline/index.ts) hands each
 * step to traced() in a closure, `traced(trace, 'auth', () => identify(req))`, whether or not
 * tracing is on. This measures, with tracing off, the heap bytes one request's three steps
 * (auth, validate, limits; stand-in steps, the real traced()) allocate in four shapes, after
 * warm-up (optimised code):
 *   closures — as `run` is written now;
 *   direct   — the steps called without traced() (what "nothing" would be);
 *   branched — `trace ? trace.step(name, () => step(x)) : step(x)`: closures only when traced;
 *   args     — traced(trace, name, step, a, b): the step and its arguments, no closure.
 *
 *   tsc -p tsconfig.bench.json && node --min-semi-space-size=64 --max-semi-space-size=64 dist/bench/comparisons/traced-step-allocations.js
 *
 * The young generation is made large enough that no GC runs inside a batch (a batch a GC ran
 * in is reported as n/a): heapUsed after minus before, over the batch, is what it allocated.
 */

interface Caller {
  readonly id: number;
}
interface Req {
  readonly caller: Caller;
  readonly body: object;
}
interface Exchange {
  trace: RequestTrace | undefined;
  caller?: Caller;
  body?: object;
  admission?: Caller;
}
type Run = (req: Req, exchange: Exchange) => Promise<Caller>;

const identify = async (req: Req): Promise<Caller> => req.caller;
const readBody = async (req: Req, _caller: Caller): Promise<object> => req.body;
const admit = async (caller: Caller): Promise<Caller> => caller;

const closures: Run = async (req, exchange) => {
  const { trace } = exchange;
  const caller = (exchange.caller = await traced(trace, 'auth', () => identify(req)));
  exchange.body = await traced(trace, 'validate', () => readBody(req, caller));
  return (exchange.admission = await traced(trace, 'limits', () => admit(caller)));
};

const direct: Run = async (req, exchange) => {
  const caller = (exchange.caller = await identify(req));
  exchange.body = await readBody(req, caller);
  return (exchange.admission = await admit(caller));
};

const branched: Run = async (req, exchange) => {
  const { trace } = exchange;
  const caller = (exchange.caller = await (trace ? trace.step('auth', () => identify(req)) : identify(req)));
  exchange.body = await (trace ? trace.step('validate', () => readBody(req, caller)) : readBody(req, caller));
  return (exchange.admission = await (trace ? trace.step('limits', () => admit(caller)) : admit(caller)));
};

/** traced() taking the step and its arguments: a closure is made only when a span is. */
function tracedCall<A, B, T>(trace: RequestTrace | undefined, name: 'auth' | 'validate' | 'limits', work: (a: A, b: B) => Promise<T>, a: A, b: B): Promise<T> {
  return trace === undefined ? work(a, b) : trace.step(name, () => work(a, b));
}

const args: Run = async (req, exchange) => {
  const { trace } = exchange;
  const caller = (exchange.caller = await tracedCall(trace, 'auth', identify, req, undefined));
  exchange.body = await tracedCall(trace, 'validate', readBody, req, caller);
  return (exchange.admission = await tracedCall(trace, 'limits', admit, caller, undefined));
};

/** Bytes allocated per call over `n` calls, or NaN when a GC ran meanwhile. */
function bytesPerCall(run: Run, n: number): Promise<number> {
  const req: Req = { caller: { id: 1 }, body: {} };
  const exchange: Exchange = { trace: undefined };
  return heapBytesPerCall(() => run(req, exchange), n);
}

async function main(): Promise<void> {
  const shapes: ReadonlyArray<[string, Run]> = [['closures', closures], ['direct', direct], ['branched', branched], ['args', args]];
  for (let warm = 0; warm < 20; warm++) for (const [, run] of shapes) await bytesPerCall(run, 4000);
  const samples = new Map<string, number[]>(shapes.map(([name]) => [name, []]));
  for (let round = 0; round < 8; round++) for (const [name, run] of shapes) samples.get(name)!.push(await bytesPerCall(run, 4000));

  const base = medianOfClean(samples.get('direct')!);
  process.stdout.write('| shape | bytes per request (3 steps) | vs direct |\n|---|--:|--:|\n');
  for (const [name] of shapes) {
    const bytes = medianOfClean(samples.get(name)!);
    process.stdout.write(`| ${name} | ${bytes.toFixed(1)} | ${bytes - base >= 0 ? '+' : ''}${(bytes - base).toFixed(1)} |\n`);
  }
}

void main();
