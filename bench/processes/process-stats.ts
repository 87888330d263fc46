/**
 * What a benchmark target process costs, asked over its fork IPC channel: the parent sends a
 * request before and after a measured run and takes the difference. process.cpuUsage() is
 * µs-precise, where /proc/<pid>/stat counts 10 ms clock ticks (CLK_TCK 100) — a 1% error on a
 * 1 s run, and a cluster's workers would have to be found by pid. Asking the process avoids both.
 */

export interface ProcessStats {
  /** User + system CPU time since the process started, summed over every process of the target. */
  readonly cpuMicros: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** 1, or a cluster's primary plus its workers. */
  readonly processes: number;
}

interface StatsRequest {
  readonly type: 'stats-request';
  readonly id: number;
  /** Collect garbage first (needs --expose-gc): a steadier heap and RSS for the leak check. */
  readonly gc: boolean;
}

interface StatsReply {
  readonly type: 'stats-reply';
  readonly id: number;
  readonly stats: ProcessStats;
}

/** Both a ChildProcess (parent → target) and a cluster Worker (primary → worker) fit this. */
export interface MessageChannel {
  send(message: StatsRequest): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

const isMessage = <T extends { type: string }>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/** This process alone. */
export function ownStats(gc: boolean): ProcessStats {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return { cpuMicros: cpu.user + cpu.system, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, processes: 1 };
}

export function sumStats(parts: readonly ProcessStats[]): ProcessStats {
  return parts.reduce((sum, part) => ({
    cpuMicros: sum.cpuMicros + part.cpuMicros,
    rssBytes: sum.rssBytes + part.rssBytes,
    heapUsedBytes: sum.heapUsedBytes + part.heapUsedBytes,
    processes: sum.processes + part.processes,
  }));
}

/** Child side: answer every stats request from the parent with what `collect` measures. */
export function answerStatsRequests(collect: (gc: boolean) => Promise<ProcessStats>): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<StatsRequest>(message, 'stats-request')) return;
    void collect(message.gc).then((stats) => {
      const reply: StatsReply = { type: 'stats-reply', id: message.id, stats };
      process.send?.(reply);
    });
  });
}

let nextRequestId = 1;

/** Parent side: one stats request to a child, answered within 5 s or rejected. */
export function queryStats(channel: MessageChannel, gc = false): Promise<ProcessStats> {
  const id = nextRequestId++;
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (!isMessage<StatsReply>(message, 'stats-reply') || message.id !== id) return;
      clearTimeout(timer);
      channel.off('message', onMessage);
      resolve(message.stats);
    };
    const timer = setTimeout(() => {
      channel.off('message', onMessage);
      reject(new Error('a benchmark target did not answer a stats request within 5 s'));
    }, 5000);
    channel.on('message', onMessage);
    channel.send({ type: 'stats-request', id, gc });
  });
}
