import { readdirSync, readFileSync } from 'node:fs';

/** CPU time of one process, split into its main thread (the request thread) and all its other threads. */
export interface ThreadCpu {
  readonly mainMicros: number;
  readonly otherMicros: number;
}

/** Linux's clock tick (CLK_TCK): /proc counts CPU time in 10 ms ticks. */
const MICROS_PER_TICK = 10_000;

interface TaskCpu {
  readonly tid: string;
  /** utime + stime (fields 14 and 15), µs. */
  readonly micros: number;
  /** Its nice value (field 19). */
  readonly nice: number;
}

/** Each live thread of a process, from /proc/<pid>/task/<tid>/stat (fields counted after the parenthesised name). */
function tasks(pid: number): TaskCpu[] {
  const found: TaskCpu[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // The thread ended while the list was read.
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    found.push({ tid, micros: (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK, nice: Number(fields[16]) });
  }
  return found;
}

/**
 * CPU so far, µs, of a process's threads whose nice value is `nice`: how tracing's export thread
 * is told apart, since it lowers its own priority (Linux only).
 */
export function cpuAtNice(pid: number, nice: number): number {
  let micros = 0;
  for (const task of tasks(pid)) if (task.nice === nice) micros += task.micros;
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
  for (const task of tasks(pid)) {
    if (task.tid === String(pid)) mainMicros += task.micros;
    else otherMicros += task.micros;
  }
  return { mainMicros, otherMicros };
}
