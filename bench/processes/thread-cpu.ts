import { readdirSync, readFileSync } from 'node:fs';

/** CPU time of one process, split into its main thread (the request thread) and all its other threads. */
export interface ThreadCpu {
  readonly mainMicros: number;
  readonly otherMicros: number;
}

/** Linux's clock tick (CLK_TCK): /proc counts CPU time in 10 ms ticks. */
const MICROS_PER_TICK = 10_000;

/** utime + stime of one task, in ticks, from /proc/<pid>/task/<tid>/stat (fields 14 and 15, after the parenthesised name). */
function taskTicks(pid: number, tid: string): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * A process's CPU so far, per thread kind, read from /proc (Linux only): the main thread apart
 * from the rest (worker threads such as tracing's export thread, V8's GC and compiler helpers,
 * libuv's pool). A thread that ended between two reads takes its time with it; take the
 * difference of two reads over a run in which the process starts no thread.
 */
export function threadCpu(pid: number): ThreadCpu {
  let mainMicros = 0;
  let otherMicros = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let ticks: number;
    try {
      ticks = taskTicks(pid, tid);
    } catch {
      continue; // The thread ended while the list was read.
    }
    if (tid === String(pid)) mainMicros += ticks * MICROS_PER_TICK;
    else otherMicros += ticks * MICROS_PER_TICK;
  }
  return { mainMicros, otherMicros };
}
