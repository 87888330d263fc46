import { PerformanceObserver } from 'node:perf_hooks';

/**
 * Heap bytes a piece of code allocates per call: heapUsed after minus before, over a batch in
 * which no GC ran (run the process with a young generation large enough, e.g.
 * `--min-semi-space-size=64 --max-semi-space-size=64`). A batch a GC ran in reads NaN.
 */

let gcs = 0;
new PerformanceObserver((list) => void (gcs += list.getEntries().length)).observe({ entryTypes: ['gc'] });

/** Bytes allocated per call over `n` calls of `call`, or NaN when a GC ran meanwhile. */
export async function heapBytesPerCall(call: () => Promise<unknown>, n: number): Promise<number> {
  const gcsBefore = gcs;
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) await call();
  const after = process.memoryUsage().heapUsed;
  // GC entries are delivered asynchronously: let them arrive before looking.
  await new Promise((resolve) => setImmediate(resolve));
  return gcs === gcsBefore ? (after - before) / n : Number.NaN;
}

/** The median of the batches no GC spoiled (the upper one of an even count); NaN when every one was. */
export function medianOfClean(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[sorted.length >> 1]!;
}
