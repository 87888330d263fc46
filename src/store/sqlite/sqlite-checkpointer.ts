import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { StoreLogger } from '../core/logger.js';

/**
 * Checkpoints a WAL-mode SQLite file from a worker thread.
 *
 * SQLite's automatic checkpoint runs inside whichever commit crosses `wal_autocheckpoint`
 * pages: that commit copies the WAL into the database file and fsyncs it — 14–18 ms with the
 * event loop blocked, once every few thousand ledger rows (measured: commit p99 14 ms with the
 * automatic checkpoint, 0.5 ms without). A PASSIVE checkpoint from a second connection does the
 * same copy without blocking the writer, so the gateway's connection turns the automatic one off
 * while this worker runs, and turns it back on should the worker fail.
 */

/** What `PRAGMA wal_checkpoint(PASSIVE)` answers: WAL frames in all, and how many are now in the database file. */
export interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

type WorkerReply = { readonly id: number; readonly result?: CheckpointResult; readonly error?: string };

// CommonJS, evaluated: it needs no file of its own in src/ or dist/ (the chat worker's lesson).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Sqlite = require(workerData.modulePath);
const file = new Sqlite(workerData.path, { timeout: workerData.busyTimeoutMs });
function checkpoint(id) {
  try {
    const [row] = file.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ id, result: { busy: row.busy, log: row.log, checkpointed: row.checkpointed } });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
}
const timer = setInterval(() => checkpoint(0), workerData.intervalMs);
parentPort.on('message', (message) => {
  checkpoint(message.id);
  if (message.stop) {
    clearInterval(timer);
    file.close();
    parentPort.close();
  }
});
`;

export interface SqliteCheckpointerOptions {
  readonly path: string;
  /** How often the worker checkpoints. */
  readonly intervalMs: number;
  readonly busyTimeoutMs: number;
  readonly logger: StoreLogger;
  /** Called once if the worker stops on its own (the caller turns the automatic checkpoint back on). */
  readonly onFailure: (reason: string) => void;
}

export class SqliteCheckpointer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();
  private nextId = 1;
  private stopped = false;
  private failed = false;

  constructor(private readonly options: SqliteCheckpointerOptions) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        modulePath: createRequire(import.meta.url).resolve('better-sqlite3'),
        path: options.path,
        intervalMs: options.intervalMs,
        busyTimeoutMs: options.busyTimeoutMs,
      },
    });
    // The worker never keeps the process alive; close() stops it for an orderly exit.
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => this.onReply(reply));
    this.worker.on('error', (error) => this.fail(error.message));
    this.worker.on('exit', (code) => {
      if (!this.stopped) this.fail(`the checkpoint worker exited with code ${code}`);
      for (const resolve of this.waiting.values()) resolve({ id: 0, error: 'the checkpoint worker has stopped' });
      this.waiting.clear();
    });
  }

  /** Checkpoints now; resolves with what SQLite reports. */
  checkpointNow(): Promise<CheckpointResult> {
    return this.send(false);
  }

  /** A last checkpoint, then the worker closes its connection and exits. */
  async stop(): Promise<void> {
    if (this.stopped || this.failed) return;
    const last = this.send(true).catch(() => undefined);
    this.stopped = true;
    await last;
    await new Promise<void>((resolve) => (this.worker.threadId === -1 ? resolve() : this.worker.once('exit', () => resolve())));
  }

  private send(stop: boolean): Promise<CheckpointResult> {
    if (this.stopped || this.failed) return Promise.reject(new Error('the checkpoint worker has stopped'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) => (reply.result ? resolve(reply.result) : reject(new Error(reply.error))));
      this.worker.postMessage({ id, stop });
    });
  }

  private onReply(reply: WorkerReply): void {
    if (reply.id === 0) {
      // A scheduled checkpoint: only a failure is worth a line (the file stays usable either way).
      if (reply.error !== undefined) this.options.logger.warn({ err: reply.error }, 'SQLite checkpoint failed');
      return;
    }
    const resolve = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    resolve?.(reply);
  }

  private fail(reason: string): void {
    if (this.failed || this.stopped) return;
    this.failed = true;
    this.options.logger.warn({ err: reason }, 'SQLite checkpoint worker stopped; commits checkpoint the WAL again');
    this.options.onFailure(reason);
  }
}
