import type { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { answer, ask } from './ipc.js';

/**
 * The event-loop delay of a benchmark child, read by the parent over IPC: how late a timer
 * that should fire every RESOLUTION_MS fires — what any request arriving then waited on top of
 * its own work. perf_hooks counts the interval itself in each sample; these figures are the
 * delay beyond it (0 = on time).
 */

const RESOLUTION_MS = 10;
const TOPIC = 'loop-delay';

export interface LoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly samples: number;
}

export interface LoopDelayReading {
  /** Since the previous reading. */
  readonly window: LoopDelay;
  /** Since the run histogram was last restarted. */
  readonly run: LoopDelay;
}

interface LoopDelayQuestion {
  /** Start the run histogram afresh after reading it (the start of the measured period). */
  readonly restartRun: boolean;
}

const beyondInterval = (nanos: number): number => Math.max(0, nanos / 1e6 - RESOLUTION_MS);

function summarize(histogram: IntervalHistogram): LoopDelay {
  if (histogram.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0, samples: 0 };
  return {
    p50Ms: beyondInterval(histogram.percentile(50)),
    p99Ms: beyondInterval(histogram.percentile(99)),
    maxMs: beyondInterval(histogram.max),
    samples: histogram.count,
  };
}

/** Child side: samples its own event loop from now on and answers the parent's readings. */
export function answerLoopDelayReadings(): void {
  const run = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const window = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  run.enable();
  window.enable();
  answer<LoopDelayQuestion, LoopDelayReading>(TOPIC, ({ restartRun }) => {
    const reading = { window: summarize(window), run: summarize(run) };
    window.reset();
    if (restartRun) run.reset();
    return reading;
  });
}

/** Parent side: the child's loop delay since the last reading, and over the run. */
export function readLoopDelay(child: ChildProcess, restartRun = false): Promise<LoopDelayReading> {
  return ask<LoopDelayReading>(child, TOPIC, { restartRun } satisfies LoopDelayQuestion);
}
