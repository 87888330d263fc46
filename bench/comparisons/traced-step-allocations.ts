import { heapBytesPerCall, medianOfClean } from './heap-bytes.js';
import type { RequestTrace } from '../../src/tracing/index.js';

/**
 * Does tracing off allocate per request? The pipeline's `run` (src/pipeline/index.ts) marks each
 * step's span around its call: `trace?.begin('auth'); await identify(req); trace?.end()`. Before,
 * it handed each step to a wrapper in a closure, `traced(trace, 'auth', () => identify(req))`,
 * whether or not tracing was on. This measures, with tracing off, the heap bytes one request's
 * three steps (auth, validate, limits; stand-in steps) allocate in three shapes, after warm-up
 * (optimised code):
 *   marks    — as `run` is written now;
 *   direct   — the steps called with no tracing at all (what "nothing" would be);
 *   closures — as `run` was written before (the wrapper, as it was, for comparison).
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

const marks: Run = async (req, exchange) => {
  const { trace } = exchange;
  trace?.begin('auth');
  const caller = (exchange.caller = await identify(req));
  trace?.end();
  trace?.begin('validate');
  exchange.body = await readBody(req, caller);
  trace?.end();
  trace?.begin('limits');
  exchange.admission = await admit(caller);
  trace?.end();
  return exchange.admission;
};

const direct: Run = async (req, exchange) => {
  const caller = (exchange.caller = await identify(req));
  exchange.body = await readBody(req, caller);
  return (exchange.admission = await admit(caller));
};

/** The wrapper `run` used before, with tracing off: the step called from its closure. */
function traced<T>(trace: RequestTrace | undefined, work: () => Promise<T>): Promise<T> {
  if (trace !== undefined) throw new Error('measured with tracing off');
  return work();
}

const closures: Run = async (req, exchange) => {
  const { trace } = exchange;
  const caller = (exchange.caller = await traced(trace, () => identify(req)));
  exchange.body = await traced(trace, () => readBody(req, caller));
  return (exchange.admission = await traced(trace, () => admit(caller)));
};

/** Bytes allocated per call over `n` calls, or NaN when a GC ran meanwhile. */
function bytesPerCall(run: Run, n: number): Promise<number> {
  const req: Req = { caller: { id: 1 }, body: {} };
  const exchange: Exchange = { trace: undefined };
  return heapBytesPerCall(() => run(req, exchange), n);
}

async function main(): Promise<void> {
  const shapes: ReadonlyArray<[string, Run]> = [['marks', marks], ['direct', direct], ['closures', closures]];
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
