/**
 * Writes records to the database in batches, off the request path: a record is added to a
 * bounded buffer and written with the next batch. A batch that fails goes back to the front of
 * the buffer and is retried with backoff, so a database that is away loses nothing until the
 * buffer is full; then the oldest records are dropped, each reported. A batch the database
 * refused (`refused`: a record it cannot store) is written again record by record, so one bad
 * record is dropped alone instead of holding up every record behind it. Writes must be
 * idempotent (a batch whose reply was lost is written again).
 */
export interface BatchWriterOptions<T> {
  /** Writes one batch; rejects when it could not. */
  readonly write: (batch: readonly T[]) => Promise<unknown>;
  /** Records kept while the database is away (default 100,000); a function is asked each time (it may change on reload). */
  readonly maxBuffered?: number | (() => number);
  /** Records per write (default 500). */
  readonly maxBatch?: number;
  /** How long records gather before a write (default 50 ms). */
  readonly batchDelayMs?: number;
  /** A record given up for good: the buffer was full, the writer closed with it unwritten, or the database refused it on its own. */
  readonly onDropped: (record: T, reason: DropReason, cause?: unknown) => void;
  /** Whether a write's failure is the database refusing the records (retrying them cannot help); default: never. */
  readonly refused?: (err: unknown) => boolean;
  /** A write failed (it will be retried). */
  readonly onWriteError: (err: unknown) => void;
  /** A journal of the records added: sealed when a write takes every buffered record, released once that write committed. */
  readonly checkpoints?: Checkpoints;
}

/** Where records added so far are marked (`seal`), and the marks whose records are all written (`release`). */
export interface Checkpoints {
  seal(): number;
  release(mark: number): void;
}

export type DropReason = 'buffer_full' | 'closed' | 'refused';

const MAX_RETRY_DELAY_MS = 5000;

export class BatchWriter<T> {
  private buffer: T[] = [];
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  private readonly maxBufferedOf: () => number;
  private readonly maxBatch: number;
  private readonly batchDelayMs: number;
  private waiters: Array<() => void> = [];

  constructor(private readonly options: BatchWriterOptions<T>) {
    const max = options.maxBuffered ?? 100_000;
    this.maxBufferedOf = typeof max === 'number' ? () => max : max;
    this.maxBatch = options.maxBatch ?? 500;
    this.batchDelayMs = options.batchDelayMs ?? 50;
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Adds a record; never blocks, never throws. */
  add(record: T): void {
    if (this.closed) {
      this.options.onDropped(record, 'closed');
      return;
    }
    this.buffer.push(record);
    if (this.buffer.length > this.maxBufferedOf()) this.options.onDropped(this.buffer.shift()!, 'buffer_full');
    this.schedule(this.batchDelayMs);
  }

  /** Resolves once everything added so far is written, or at `deadline` (epoch ms), whichever is first. */
  async flush(deadline = Number.POSITIVE_INFINITY): Promise<void> {
    while ((this.buffer.length > 0 || this.writing) && Date.now() < deadline) {
      if (!this.writing && this.failures === 0) this.writeNext();
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        const timer = setTimeout(resolve, Math.max(0, Math.min(deadline - Date.now(), MAX_RETRY_DELAY_MS)));
        timer.unref();
      });
    }
  }

  /** One last flush until `deadline`, then what is left is dropped (and reported). */
  async close(deadline: number): Promise<void> {
    await this.flush(deadline);
    this.closed = true;
    clearTimeout(this.timer);
    for (const record of this.buffer.splice(0)) this.options.onDropped(record, 'closed');
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.writing || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writeNext();
    }, delayMs);
    this.timer.unref();
  }

  private writeNext(): void {
    if (this.writing || this.buffer.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer.splice(0, this.maxBatch);
    const mark = this.buffer.length === 0 ? this.options.checkpoints?.seal() : undefined;
    this.writing = this.writeBatch(batch).then((unwritten) => {
      if (unwritten.length === 0) {
        this.failures = 0;
        if (mark !== undefined) this.options.checkpoints?.release(mark);
        return;
      }
      this.failures += 1;
      // Back in front, oldest first; past the bound the oldest go.
      this.buffer = unwritten.concat(this.buffer);
      while (this.buffer.length > this.maxBufferedOf()) this.options.onDropped(this.buffer.shift()!, 'buffer_full');
    });
    void this.writing.finally(() => {
      this.writing = null;
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
      if (this.buffer.length > 0) this.schedule(this.failures === 0 ? 0 : Math.min(100 * 2 ** this.failures, MAX_RETRY_DELAY_MS));
    });
  }

  /** Writes a batch; answers the records still to write (all of them when the database is away). */
  private async writeBatch(batch: T[]): Promise<T[]> {
    const { write, refused = () => false } = this.options;
    try {
      await write(batch);
      return [];
    } catch (err) {
      this.options.onWriteError(err);
      if (!refused(err)) return batch;
    }
    // Refused: one record alone at a time, so only the record the database cannot store is lost.
    for (const [i, record] of batch.entries()) {
      try {
        await write([record]);
      } catch (err) {
        if (!refused(err)) {
          this.options.onWriteError(err);
          return batch.slice(i);
        }
        this.options.onDropped(record, 'refused', err);
      }
    }
    return [];
  }
}
