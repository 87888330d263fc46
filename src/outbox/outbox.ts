import { randomUUID } from 'node:crypto';
import { matchesEvent, type NotificationsConfig } from '../config/index.js';
import { BatchWriter, type OutboxDelivery, type OutboxFilter, type OutboxInsert, type StoreHandle } from '../store/index.js';
import { Deliverer, type DelivererHooks, type SinkState } from './deliverer.js';
import type { EventSink, NotificationEvent } from './event.js';

export interface OutboxOptions extends DelivererHooks {
  /** The CloudEvents `source` of exported usage: this gateway. */
  readonly source: string;
  /** An event that could not be stored (the database was away past the buffer). */
  readonly dropped: (eventId: string, sink: string) => void;
}

/** One sink as /admin/notifications and the console show it. */
export interface SinkHealth extends SinkState {
  name: string;
  kind: 'webhook' | 'export';
  url: string;
  /** Only the origin is shown: a path or query may carry a token. */
  format: string;
}

/** Events published and not yet stored, at most (the rest are dropped, each reported). */
const MAX_BUFFERED = 10_000;

/**
 * The durable outbox (SPEC 24) as the gateway holds it: `publish` queues a row per matching
 * webhook and returns at once; a batch writer stores them (INSERT … ON CONFLICT DO NOTHING, so
 * the same event id is stored once per sink, whoever publishes it); the deliverer sends them.
 */
export class Outbox implements EventSink {
  private readonly writer: BatchWriter<OutboxInsert>;
  private readonly deliverer: Deliverer;

  constructor(
    private readonly handle: StoreHandle,
    private settings: NotificationsConfig,
    private readonly options: OutboxOptions,
  ) {
    this.writer = new BatchWriter<OutboxInsert>({
      write: async (batch) => {
        await handle.require().outbox.insertDeliveries(batch);
        this.deliverer.nudge();
      },
      maxBuffered: MAX_BUFFERED,
      onDropped: (row) => options.dropped(row.eventId, row.sink),
      onWriteError: (err) => options.error(err),
    });
    this.deliverer = new Deliverer(handle, settings, options.source, options);
    this.deliverer.start();
  }

  publish(event: NotificationEvent): void {
    try {
      const createdAt = new Date().toISOString();
      for (const sink of this.settings.webhooks) {
        if (!sink.events.some((pattern) => matchesEvent(pattern, event.type))) continue;
        this.writer.add({ id: `${sink.name}:${event.id}`, sink: sink.name, eventId: event.id, type: event.type, team: event.team ?? null, payload: event, createdAt });
      }
    } catch (err) {
      this.options.error(err);
    }
  }

  configure(next: NotificationsConfig): void {
    this.settings = next;
    this.deliverer.configure(next);
  }

  /** Publishes a `notification.test` event to every webhook that takes it; answers its id. */
  sendTest(actor: string): string {
    const id = `test-${randomUUID()}`;
    this.publish({ id, type: 'notification.test', time: new Date().toISOString(), data: { message: 'A test notification from Tollgate.', actor } });
    return id;
  }

  list(filter: OutboxFilter): Promise<OutboxDelivery[]> {
    return this.handle.require().outbox.listDeliveries(filter);
  }

  get(id: string): Promise<OutboxDelivery | undefined> {
    return this.handle.require().outbox.getDelivery(id);
  }

  /** Makes a delivery due now again, its attempts counted from zero; undefined when there is none. */
  async retry(id: string): Promise<OutboxDelivery | undefined> {
    const store = this.handle.require();
    const delivery = await store.outbox.getDelivery(id);
    if (!delivery) return undefined;
    const now = new Date().toISOString();
    await store.outbox.recordResult(id, { state: 'pending', attempts: 0, nextAt: now, at: now, status: delivery.lastStatus, error: delivery.lastError });
    this.deliverer.nudge();
    return store.outbox.getDelivery(id);
  }

  /** Each configured sink and what the deliverer last saw of it. */
  health(): SinkHealth[] {
    const webhooks = this.settings.webhooks.map((sink) => ({ name: sink.name, kind: 'webhook' as const, url: new URL(sink.url).origin, format: sink.format, ...this.deliverer.stateOf(sink.name) }));
    const exports = this.settings.export.map((sink) => ({ name: sink.name, kind: 'export' as const, url: new URL(sink.url).origin, format: 'cloudevents', ...this.deliverer.stateOf(sink.name) }));
    return [...webhooks, ...exports];
  }

  /** Whether this instance is the one delivering now. */
  get delivering(): boolean {
    return this.deliverer.leader;
  }

  /** Stores what is buffered (until `deadline`), then stops delivering and hands the lease back. */
  async close(deadline: number): Promise<void> {
    await this.writer.close(deadline);
    await this.deliverer.close();
  }

  /** Resolves once every event published so far is stored (tests, shutdown). */
  flush(deadline?: number): Promise<void> {
    return this.writer.flush(deadline);
  }
}
