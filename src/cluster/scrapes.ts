import type { Worker } from 'node:cluster';
import { aggregateSeries, type ProcessSeries } from '../observability/index.js';
import type { PrimaryMessage } from './messages.js';

/** A worker that has not sent its series by then fails the scrape (a partial sum would read as a counter reset). */
const COLLECT_TIMEOUT_MS = 3000;

interface Collection {
  readonly requester: Worker;
  readonly scrapeId: number;
  readonly waiting: Set<Worker>;
  readonly series: ProcessSeries[];
  readonly timer: NodeJS.Timeout;
}

/**
 * Scrapes in progress at the primary: a worker that received GET /metrics asks here, every
 * listening worker sends its series, and the requester gets them aggregated. A worker that
 * exits meanwhile is left out (its series went with it).
 */
export class Scrapes {
  private nextId = 0;
  private readonly collections = new Map<number, Collection>();

  constructor(
    private readonly workers: () => Iterable<Worker>,
    private readonly send: (worker: Worker, message: PrimaryMessage) => void,
  ) {}

  start(requester: Worker, scrapeId: number): void {
    const id = this.nextId++;
    const waiting = new Set([requester, ...this.workers()]);
    const timer = setTimeout(() => this.finish(id, false), COLLECT_TIMEOUT_MS);
    this.collections.set(id, { requester, scrapeId, waiting, series: [], timer });
    for (const worker of waiting) this.send(worker, { tollgate: 'collect', id });
  }

  answer(worker: Worker, id: number, series: ProcessSeries | null): void {
    const collection = this.collections.get(id);
    if (!collection?.waiting.delete(worker)) return;
    if (series === null) return this.finish(id, false);
    collection.series.push(series);
    if (collection.waiting.size === 0) this.finish(id, true);
  }

  /** `worker` exited: collections stop waiting for it, and its own scrapes have no one to answer. */
  forget(worker: Worker): void {
    for (const [id, collection] of this.collections) {
      if (collection.requester === worker) {
        clearTimeout(collection.timer);
        this.collections.delete(id);
      } else if (collection.waiting.delete(worker) && collection.waiting.size === 0) this.finish(id, true);
    }
  }

  private finish(id: number, complete: boolean): void {
    const collection = this.collections.get(id);
    if (!collection) return;
    clearTimeout(collection.timer);
    this.collections.delete(id);
    const { requester, scrapeId } = collection;
    const answer = (body: string | null): void => this.send(requester, { tollgate: 'exposition', id: scrapeId, body });
    if (!complete) return answer(null);
    aggregateSeries(collection.series).then(answer, () => answer(null));
  }
}
