import type { QueryResponse, TestPrometheus } from './prometheus.js';

/**
 * An instant vector as `"<label values joined by space>"` → value, for exact comparisons
 * (`labels` picks and orders the labels that make the key).
 */
export function vectorByLabels(answer: QueryResponse, labels: string[]): Record<string, number> {
  if (answer.status !== 'success') throw new Error(`query failed: ${answer.error ?? 'unknown error'}`);
  const out: Record<string, number> = {};
  for (const series of answer.data?.result ?? []) {
    out[labels.map((l) => series.metric[l] ?? '').join(' ')] = Number(series.value?.[1]);
  }
  return out;
}

/** Runs `expr` and returns its vector keyed by `labels` (see vectorByLabels). */
export async function queryVector(prometheus: TestPrometheus, expr: string, labels: string[]): Promise<Record<string, number>> {
  return vectorByLabels(await prometheus.query(expr), labels);
}

/** Scrapes each target has had so far (Prometheus' own count of `up` samples). */
export async function scrapesSoFar(prometheus: TestPrometheus): Promise<number> {
  const counts = await queryVector(prometheus, `count_over_time(up{job="${prometheus.jobName}"}[1h])`, ['instance']);
  const values = Object.values(counts);
  return values.length === 0 ? 0 : Math.min(...values);
}

/** Resolves after `count` more scrapes of every target, so what happened before is in the data with a sample to spare. */
export async function waitForMoreScrapes(prometheus: TestPrometheus, count: number, timeoutMs = 20_000): Promise<void> {
  const before = await scrapesSoFar(prometheus);
  await prometheus.waitForScrape({ scrapes: before + count, timeoutMs });
}

const COMPARISON_WITH_NUMBER = /\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?=\s|\)|$)/gi;

/**
 * An alert expression without its thresholds: every comparison against a number literal is
 * dropped (`(errors / requests) > 0.05` → `(errors / requests)`, `up == 0` → `up`). What is
 * left is the value the alert compares, which has data whenever the metrics it reads do,
 * even while the alert itself (rightly) does not fire.
 */
export function withoutThresholds(expr: string): string {
  return expr.replace(COMPARISON_WITH_NUMBER, '').trim();
}
