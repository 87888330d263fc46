import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../observability/index.js';
import { isOurs, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { Scrapes } from './scrapes.js';

/** A worker that lived this long was not crash-looping: the next replacement starts at once. */
const STEADY_LIFETIME_MS = 10_000;
/** Replacements of workers that died young wait this, doubled per death in a row, up to the cap. */
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

export interface PrimaryOptions {
  readonly workers: number;
  readonly logger: Logger;
}

/**
 * The cluster's primary: it forks the workers (which share the port), serves nothing itself,
 * and keeps them one gateway — scrapes aggregated, reloads and SQLite changes fanned out, SIGTERM
 * drains every worker before it exits, and a worker that dies is replaced (later and later while
 * they keep dying young). A worker that dies before all have started up stops the start: the
 * cause (a bad key, a port taken) would kill every replacement too.
 */
export function startPrimary(options: PrimaryOptions): void {
  const { logger } = options;
  const ready = new Set<Worker>();
  const bornAt = new Map<Worker, number>();
  const scrapes = new Scrapes(() => ready, (worker, message) => send(worker, message));
  let started = false;
  let stopping = false;
  let youngDeaths = 0;
  let exitCode = 0;

  const fork = (): void => {
    const worker = cluster.fork();
    bornAt.set(worker, Date.now());
    worker.on('message', (message: unknown) => {
      if (isOurs<WorkerMessage>(message)) onMessage(worker, message);
    });
  };

  const onMessage = (worker: Worker, message: WorkerMessage): void => {
    switch (message.tollgate) {
      case 'ready':
        ready.add(worker);
        logger.info({ pid: worker.process.pid, workers: ready.size }, 'worker ready');
        if (!started && ready.size === options.workers) {
          started = true;
          logger.info({ workers: options.workers, pids: [...ready].map((w) => w.process.pid) }, 'workers listening');
        }
        return;
      case 'scrape':
        scrapes.start(worker, message.id);
        return;
      case 'series':
        scrapes.answer(worker, message.id, message.series);
        return;
      case 'reloaded':
        for (const other of ready) if (other !== worker) send(other, { tollgate: 'reload', echo: true });
        return;
      case 'change':
        for (const other of Object.values(cluster.workers ?? {})) if (other && other !== worker) send(other, message);
        return;
    }
  };

  cluster.on('exit', (worker, code, signal) => {
    ready.delete(worker);
    scrapes.forget(worker);
    const lived = Date.now() - (bornAt.get(worker) ?? 0);
    bornAt.delete(worker);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info('stopped');
        process.exit(exitCode);
      }
      return;
    }
    if (!started) {
      logger.error({ pid: worker.process.pid, code, signal }, 'a worker exited during start-up: stopping');
      stopAll('SIGTERM', 1);
      return;
    }
    youngDeaths = lived >= STEADY_LIFETIME_MS ? 0 : youngDeaths + 1;
    const delayMs = youngDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (youngDeaths - 1));
    logger.warn({ pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delayMs }, 'worker exited: replacing it');
    setTimeout(() => stopping || fork(), delayMs);
  });

  /** Every worker drains (its own SIGTERM handling); the primary exits once they all have. */
  const stopAll = (signal: string, code = 0): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    logger.info({ signal }, 'draining every worker');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker.process.kill('SIGTERM');
  };

  process.on('SIGHUP', () => {
    // One worker records the reload (audit log, counter); the others apply the same file.
    [...ready].forEach((worker, index) => send(worker, { tollgate: 'reload', echo: index > 0 }));
  });
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));
  for (let i = 0; i < options.workers; i += 1) fork();
}

/** Sends unless the worker's channel has closed (it is exiting; its 'exit' event follows). */
function send(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message);
}
