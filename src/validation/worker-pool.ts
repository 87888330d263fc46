import type { Transferable, Worker } from 'node:worker_threads';

/** A message for a worker, and the buffers it hands over. */
export interface Outgoing<Message> {
  readonly message: Message;
  readonly transfer: readonly Transferable[];
}

interface Job<Message, Reply> {
  /** Called when a worker takes the job, so that copies of request bytes exist only then. */
  readonly prepare: () => Outgoing<Message>;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (err: Error) => void;
}

/** A worker that died (crash, out of memory) or was stopped while it had the job. */
export class WorkerPoolError extends Error {}

/**
 * A fixed number of worker threads, started on first need and kept: each takes one job at a
 * time, answering with one message; jobs wait in order for a free worker. A worker that dies
 * fails only its own job, and another is started in its place when work waits. Idle workers
 * do not keep the process alive.
 */
export class WorkerPool<Message, Reply> {
  private readonly live = new Set<Worker>();
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job<Message, Reply>>();
  private readonly waiting: Job<Message, Reply>[] = [];
  private closed = false;

  constructor(
    private readonly spawn: () => Worker,
    private readonly size: number,
  ) {}

  /** Runs one job on the next free worker; rejects with WorkerPoolError if that worker dies. */
  run(prepare: () => Outgoing<Message>): Promise<Reply> {
    if (this.closed) return Promise.reject(new WorkerPoolError('the worker pool is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ prepare, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; jobs still running or waiting are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const stopped = new WorkerPoolError('the worker pool was closed');
    for (const job of this.waiting.splice(0)) job.reject(stopped);
    const workers = [...this.live];
    for (const worker of workers) this.retire(worker, stopped);
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const worker = this.idle.pop() ?? (this.live.size < this.size ? this.start() : undefined);
      if (worker === undefined) return;
      const job = this.waiting.shift()!;
      this.busy.set(worker, job);
      worker.ref();
      try {
        const { message, transfer } = job.prepare();
        worker.postMessage(message, transfer);
      } catch (err) {
        this.finish(worker, () => job.reject(err instanceof Error ? err : new Error(String(err))));
      }
    }
  }

  private start(): Worker {
    const worker = this.spawn();
    this.live.add(worker);
    worker.unref();
    worker.on('message', (reply: Reply) => this.finish(worker, (job) => job.resolve(reply)));
    worker.on('messageerror', (err) => this.finish(worker, (job) => job.reject(err)));
    worker.on('error', (err) => this.retire(worker, new WorkerPoolError(`a worker failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => this.retire(worker, new WorkerPoolError(`a worker exited with code ${code}`)));
    return worker;
  }

  /** Settles the worker's job and makes the worker free for the next. */
  private finish(worker: Worker, settle: (job: Job<Message, Reply>) => void): void {
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    if (!this.live.has(worker)) return;
    worker.unref();
    this.idle.push(worker);
    if (job !== undefined) settle(job);
    this.dispatch();
  }

  /** Forgets a worker that died or is being stopped, failing its job; a replacement starts if work waits. */
  private retire(worker: Worker, reason: WorkerPoolError): void {
    if (!this.live.delete(worker)) return;
    const at = this.idle.indexOf(worker);
    if (at !== -1) this.idle.splice(at, 1);
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    job?.reject(reason);
    if (!this.closed) this.dispatch();
  }
}
