import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import type { Logger } from '../observability/index.js';
import { LEDGER_JOURNAL_ENV, isOurs, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { Scrapes } from './scrapes.js';

/** A worker that lived this long was not crash-looping: the next replacement starts at once. */
const STEADY_LIFETIME_MS = 10_000;
/** Replacements of workers that died young wait this, doubled per death in a row, up to the cap. */
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/** How long to wait before replacing a worker, after `youngDeaths` workers in a row died within STEADY_LIFETIME_MS. */
export function replacementDelayMs(youngDeaths: number): number {
  return youngDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (youngDeaths - 1));
}

export interface PrimaryOptions {
  readonly workers: number;
  readonly logger: Logger;
  /** Where each worker journals its ledger rows, one journal per worker slot (see ledgerJournalDir). */
  readonly journalDir: string;
}

/**
 * The cluster's primary: it forks the workers (which share the port), serves nothing itself,
 * and keeps them one gateway — scrapes aggregated, reloads and SQLite changes fanned out, SIGTERM
 * drains every worker before it exits, and a worker that dies is replaced (later and later while
 * they keep dying young). A worker that dies before all have started up stops the start: the
 * cause (a bad key, a port taken) would kill every replacement too.
 */
export function startPrimary(options: PrimaryOptions): void {
  const primary = new Primary(options);
  process.on('SIGHUP', () => primary.reloadAll());
  process.on('SIGTERM', () => primary.stop('SIGTERM'));
  process.on('SIGINT', () => primary.stop('SIGINT'));
  cluster.on('exit', (worker, code, signal) => primary.exited(worker, code, signal));
  for (let slot = 0; slot < options.workers; slot += 1) primary.fork(slot);
}

class Primary {
  private readonly ready = new Set<Worker>();
  private readonly bornAt = new Map<Worker, number>();
  /** Each worker's slot: its replacement takes the same one, and with it the dead worker's ledger journal. */
  private readonly slots = new Map<Worker, number>();
  private readonly scrapes = new Scrapes(() => this.ready, send);
  private started = false;
  private stopping = false;
  private youngDeaths = 0;
  private exitCode = 0;

  constructor(private readonly options: PrimaryOptions) {}

  fork(slot: number): void {
    const worker = cluster.fork({ [LEDGER_JOURNAL_ENV]: join(this.options.journalDir, `worker-${slot}`) });
    this.bornAt.set(worker, Date.now());
    this.slots.set(worker, slot);
    worker.on('message', (message: unknown) => {
      if (isOurs<WorkerMessage>(message)) this.heard(worker, message);
    });
  }

  /** SIGHUP: one worker records the reload (audit log, counter); the others apply the same file. */
  reloadAll(): void {
    [...this.ready].forEach((worker, index) => send(worker, { tollgate: 'reload', echo: index > 0 }));
  }

  /** Every worker drains (its own SIGTERM handling); the primary exits once they all have. */
  stop(signal: string, exitCode = 0): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exitCode = exitCode;
    this.options.logger.info({ signal }, 'draining every worker');
    const workers = liveWorkers();
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker.process.kill('SIGTERM');
  }

  exited(worker: Worker, code: number | null, signal: string | null): void {
    const { logger } = this.options;
    this.ready.delete(worker);
    this.scrapes.forget(worker);
    const lived = Date.now() - (this.bornAt.get(worker) ?? 0);
    this.bornAt.delete(worker);
    const slot = this.slots.get(worker) ?? 0;
    this.slots.delete(worker);
    if (this.stopping) {
      if (liveWorkers().length > 0) return;
      logger.info('stopped');
      process.exit(this.exitCode);
    }
    if (!this.started) {
      logger.error({ pid: worker.process.pid, code, signal }, 'a worker exited during start-up: stopping');
      return this.stop('start-up failed', 1);
    }
    this.youngDeaths = lived >= STEADY_LIFETIME_MS ? 0 : this.youngDeaths + 1;
    const delayMs = replacementDelayMs(this.youngDeaths);
    logger.warn({ pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delayMs }, 'worker exited: replacing it');
    setTimeout(() => this.stopping || this.fork(slot), delayMs);
  }

  private heard(worker: Worker, message: WorkerMessage): void {
    switch (message.tollgate) {
      case 'ready':
        return this.counted(worker);
      case 'scrape':
        return this.scrapes.start(worker, message.id);
      case 'series':
        return this.scrapes.answer(worker, message.id, message.series);
      case 'reloaded':
        for (const other of this.ready) if (other !== worker) send(other, { tollgate: 'reload', echo: true });
        return;
      case 'change':
        for (const other of liveWorkers()) if (other !== worker) send(other, message);
        return;
    }
  }

  private counted(worker: Worker): void {
    const { logger, workers } = this.options;
    this.ready.add(worker);
    logger.info({ pid: worker.process.pid, workers: this.ready.size }, 'worker ready');
    if (this.started || this.ready.size < workers) return;
    this.started = true;
    logger.info({ workers, pids: [...this.ready].map((w) => w.process.pid) }, 'workers listening');
  }
}

function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
}

/** Sends unless the worker's channel has closed (it is exiting; its 'exit' event follows). */
function send(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message);
}
