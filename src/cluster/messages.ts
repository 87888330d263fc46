import type { ProcessSeries } from '../observability/index.js';

/** What a worker tells the primary over the cluster's IPC channel. */
export type WorkerMessage =
  /** Listening: the primary counts it in scrapes and fan-outs. */
  | { readonly tollgate: 'ready' }
  /** A scrape arrived here: answer with every worker's series aggregated (`exposition`). */
  | { readonly tollgate: 'scrape'; readonly id: number }
  /** This worker's series, for the primary's collection `id` (null: it could not read them). */
  | { readonly tollgate: 'series'; readonly id: number; readonly series: ProcessSeries | null }
  /** POST /admin/config/reload applied the file here: the others reload it too. */
  | { readonly tollgate: 'reloaded' }
  /** A change this worker committed to the shared SQLite file, encoded by its change feed. */
  | { readonly tollgate: 'change'; readonly payload: string };

/** What the primary tells a worker. */
export type PrimaryMessage =
  /** Send your series for collection `id`. */
  | { readonly tollgate: 'collect'; readonly id: number }
  /** The aggregated exposition for scrape `id` (null: the collection failed). */
  | { readonly tollgate: 'exposition'; readonly id: number; readonly body: string | null }
  /** Re-read the config file; `echo`: another worker records this reload (audit, counter). */
  | { readonly tollgate: 'reload'; readonly echo: boolean }
  /** A change another worker committed to the shared SQLite file. */
  | { readonly tollgate: 'change'; readonly payload: string };

/** Our messages among whatever else travels on the channel (node:cluster's own). */
export function isOurs<M extends { tollgate: string }>(message: unknown): message is M {
  return typeof message === 'object' && message !== null && typeof (message as { tollgate?: unknown }).tollgate === 'string';
}

/** The environment variable that tells a worker its ledger journal's path prefix. */
export const LEDGER_JOURNAL_ENV = 'TOLLGATE_LEDGER_JOURNAL';
