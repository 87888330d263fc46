import { readdirSync, readFileSync } from 'node:fs';

/** CPU time of one process, split into its main thread (the request thread) and all its other threads. */
export interface ThreadCpu {
  readonly mainMicros: number;
  readonly otherMicros: number;
}

/** Linux's clock tick (CLK_TCK): /proc counts CPU time in 10 ms ticks. */
const MICROS_PER_TICK = 10_000;

/** One task's /proc/<pid>/task/<tid>/stat fields after the parenthesised name (field 3 onwards). */
function taskStat(pid: number, tid: string): string[] {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of one task, in ticks (fields 14 and 15). */
const taskTicks = (pid: number, tid: string): number => {
  const fields = taskStat(pid, tid);
  return Number(fields[11]) + Number(fields[12]);
};

/**
 * CPU so far, µs, of a process's threads whose nice value is `nice` (field 19): how tracing's
 * export thread is told apart, since it lowers its own priority (Linux only).
 */
export function cpuAtNice(pid: number, nice: number): number {
  let micros = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = taskStat(pid, tid);
      if (Number(fields[16]) === nice) micros += (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK;
    } catch {
      // The thread ended while the list was read.
    }
  }
  return micros;
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
