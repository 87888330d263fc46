import { randomUUID } from 'node:crypto';
import type { NotificationsConfig } from '../config/index.js';
import type { DurableStore, OutboxDelivery, StoreHandle } from '../store/index.js';
import { resultOf } from './backoff.js';
import { BUDGET_EVENT_TYPES, type NotificationEvent } from './event.js';
import { ExportWorker, type ExportBatch } from './export-worker.js';
import { exportBody, exportRequest, webhookRequest } from './formats.js';
import { send } from './send.js';

/** The one lease every instance competes for: its holder delivers. */
const LEASE = 'deliverer';
/** Deliveries attempted at once per tick (each bounded by the timeout). */
const DUE_PER_TICK = 16;
/** Delivered and dead deliveries are deleted once this old (checked hourly by the delivering instance). */
const KEEP_FINISHED_MS = 7 * 86_400_000;
/** Budget events are kept longer than the longest budget window, a calendar month (BudgetAlerts may publish one again meanwhile). */
const KEEP_BUDGET_EVENTS_MS = 35 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
/** The type an export batch is listed under in the outbox. */
export const EXPORT_BATCH_TYPE = 'usage.export';

export interface DelivererHooks {
  /** A delivery attempt ended: `ok`, `failed` (will be retried) or `dead`. */
  readonly delivered: (sink: string, result: 'ok' | 'failed' | 'dead') => void;
  readonly error: (err: unknown) => void;
}

/** What the deliverer last saw of each sink: what /admin/notifications and the metrics show. */
export interface SinkState {
  pending: number;
  lagSeconds: number;
  lastError: string | null;
  lastSuccessAt: string | null;
}

/**
 * Delivers the outbox, on whichever instance holds the lease (SPEC 24): webhook deliveries that
 * are due, then each export sink's ledger rows past its cursor, in batches. Runs on a timer,
 * never on the request path; a tick that is still running when the next is due is not doubled.
 */
export class Deliverer {
  readonly owner = randomUUID();
  readonly sinks = new Map<string, SinkState>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private holding = false;
  private prunedAt = 0;
  /** Per export sink: failures in a row, and when it may be tried again. */
  private readonly exportRetry = new Map<string, { failures: number; notBefore: number }>();
  /** Builds export batches off the event loop, for the store it was opened for. */
  private exportWorker: { store: DurableStore; worker: ExportWorker } | undefined;

  constructor(
    private readonly handle: StoreHandle,
    private settings: NotificationsConfig,
    private readonly source: string,
    private readonly hooks: DelivererHooks,
  ) {}

  start(): void {
    this.schedule(0);
  }

  configure(next: NotificationsConfig): void {
    this.settings = next;
  }

  /** Something was just published: look sooner than the next poll. */
  nudge(): void {
    if (!this.running && !this.stopped) this.schedule(0);
  }

  /** Whether this instance held the lease at its last tick. */
  get leader(): boolean {
    return this.holding;
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.exportWorker?.worker.close();
    const store = this.handle.current;
    // Handing the lease back lets another instance take over at its next poll.
    if (this.holding && store) await store.outbox.releaseLease(LEASE, this.owner).catch(() => undefined);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err: unknown) => this.hooks.error(err))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule(this.settings.delivery.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const store = this.handle.current;
    // No sinks: nothing to deliver, and no lease write every poll for nothing.
    if (!store || this.settings.webhooks.length + this.settings.export.length === 0) return;
    await this.refreshPending(store);
    const now = Date.now();
    this.holding = await store.outbox.takeLease(LEASE, this.owner, new Date(now).toISOString(), new Date(now + this.settings.delivery.leaseMs).toISOString());
    if (!this.holding) return;
    await this.deliverDue(store);
    if (now - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = now;
      await store.outbox.deleteFinishedBefore(new Date(now - KEEP_FINISHED_MS).toISOString(), { types: BUDGET_EVENT_TYPES, before: new Date(now - KEEP_BUDGET_EVENTS_MS).toISOString() });
    }
    for (const sink of this.settings.export) {
      if (this.stopped || Date.now() - now > this.settings.delivery.leaseMs / 2) break;
      await this.exportSink(store, sink.name);
    }
  }

  private async refreshPending(store: DurableStore): Promise<void> {
    const counts = await store.outbox.pendingCounts();
    for (const sink of this.settings.webhooks) this.stateOf(sink.name).pending = counts.get(sink.name) ?? 0;
  }

  stateOf(name: string): SinkState {
    let state = this.sinks.get(name);
    if (!state) this.sinks.set(name, (state = { pending: 0, lagSeconds: 0, lastError: null, lastSuccessAt: null }));
    return state;
  }

  private async deliverDue(store: DurableStore): Promise<void> {
    const due = await store.outbox.dueDeliveries(new Date().toISOString(), DUE_PER_TICK);
    await Promise.all(due.map((delivery) => this.deliverOne(store, delivery)));
  }

  private async deliverOne(store: DurableStore, delivery: OutboxDelivery): Promise<void> {
    const sink = this.settings.webhooks.find((hook) => hook.name === delivery.sink);
    const { delivery: policy } = this.settings;
    const sent = sink
      ? await send(webhookRequest(sink, delivery.payload as NotificationEvent, Date.now()), policy.timeoutMs)
      : { ok: false, status: null, error: `no webhook "${delivery.sink}" is configured` };
    const result = sink ? resultOf(policy, delivery, sent, Date.now()) : { ...resultOf(policy, delivery, sent, Date.now()), state: 'dead' as const };
    await store.outbox.recordResult(delivery.id, result);
    this.noteResult(delivery.sink, result.state === 'delivered' ? 'ok' : result.state === 'dead' ? 'dead' : 'failed', result.error, result.at);
  }

  private noteResult(sink: string, result: 'ok' | 'failed' | 'dead', error: string | null, at: string): void {
    const state = this.stateOf(sink);
    if (result === 'ok') state.lastSuccessAt = at;
    else state.lastError = error;
    this.hooks.delivered(sink, result);
  }

  /** Sends the sink's next batches past its cursor; each delivered batch moves the cursor in the same transaction that records it. */
  private async exportSink(store: DurableStore, name: string): Promise<void> {
    const retry = this.exportRetry.get(name);
    if (retry && Date.now() < retry.notBefore) return;
    const sink = this.settings.export.find((candidate) => candidate.name === name)!;
    const settled = new Date(Date.now() - this.settings.delivery.exportSettleMs).toISOString();
    for (let batches = 0; batches < 50 && !this.stopped; batches++) {
      const batch = await this.nextBatch(store, name, settled, sink.batch);
      this.stateOf(name).lagSeconds = batch === null ? 0 : Math.max(0, (Date.now() - Date.parse(batch.first.at)) / 1000);
      if (batch === null) return;
      if (!(await this.sendBatch(store, name, batch))) return;
      if (batch.count < sink.batch) return;
    }
  }

  /** The sink's next batch past its cursor: from the export worker, else (it failed) read and built here. */
  private async nextBatch(store: DurableStore, name: string, settled: string, limit: number): Promise<ExportBatch | null> {
    const cursor = await store.outbox.exportCursor(name);
    const worker = this.workerFor(store);
    if (worker) return worker.batchAfter(cursor, settled, limit);
    const rows = await store.outbox.ledgerAfter(cursor, settled, limit);
    if (rows.length === 0) return null;
    const first = rows[0]!;
    const last = rows.at(-1)!;
    return { body: exportBody(rows, this.source), count: rows.length, first: { id: first.id, at: first.at }, last: { id: last.id, at: last.at } };
  }

  private workerFor(store: DurableStore): ExportWorker | undefined {
    if (this.exportWorker?.store === store) return this.exportWorker.worker.usable ? this.exportWorker.worker : undefined;
    const file = store.outbox.ledgerFile();
    if (file === undefined) return undefined;
    void this.exportWorker?.worker.close();
    const worker = new ExportWorker(file, this.source, (reason) => this.hooks.error(new Error(`${reason}; export batches are built on the event loop from now on`)));
    this.exportWorker = { store, worker };
    return worker;
  }

  private async sendBatch(store: DurableStore, name: string, batch: ExportBatch): Promise<boolean> {
    const sink = this.settings.export.find((candidate) => candidate.name === name)!;
    const { delivery: policy } = this.settings;
    const failures = this.exportRetry.get(name)?.failures ?? 0;
    const sent = await send(exportRequest(sink, batch.body), policy.timeoutMs);
    const now = Date.now();
    const result = resultOf({ ...policy, maxAttempts: Number.POSITIVE_INFINITY }, { attempts: failures }, sent, now);
    if (!sent.ok) {
      // The rows stay in the ledger past the cursor: nothing is lost, the batch is built again.
      this.exportRetry.set(name, { failures: failures + 1, notBefore: Date.parse(result.nextAt) });
      this.noteResult(name, 'failed', result.error, result.at);
      return false;
    }
    this.exportRetry.delete(name);
    const { first, last } = batch;
    const delivery = { id: `${name}:${first.id}`, sink: name, eventId: first.id, type: EXPORT_BATCH_TYPE, team: null, payload: { rows: batch.count, first: first.id, last: last.id }, createdAt: new Date(now).toISOString() };
    // Fenced by the lease: an instance that lost it while sending records nothing (the new holder sends the batch again).
    if (!(await store.outbox.commitExport(name, { at: last.at, id: last.id }, delivery, result, { lease: LEASE, owner: this.owner }))) {
      this.holding = false;
      return false;
    }
    this.noteResult(name, 'ok', null, result.at);
    return true;
  }
}
