import { Counter, Gauge, type Registry } from 'prom-client';

/** One sink's figures at a scrape. */
export interface OutboxSinkFigures {
  readonly name: string;
  readonly pending: number;
  /** Export sinks only: age of the oldest ledger row not yet sent. */
  readonly lagSeconds?: number;
}

/** The outbox's series (SPEC 24): deliveries counted as they end, backlog and lag read at scrape time. */
export interface OutboxMetrics {
  recordDelivery(sink: string, result: 'ok' | 'failed' | 'dead'): void;
  watchSinks(read: () => readonly OutboxSinkFigures[]): void;
}

export function createOutboxMetrics(registry: Registry): OutboxMetrics {
  let read: () => readonly OutboxSinkFigures[] = () => [];
  const delivered = new Counter({
    name: 'tollgate_outbox_delivered_total',
    help: 'Delivery attempts to notification and export sinks, by result: ok, failed (retried later) or dead (given up).',
    labelNames: ['sink', 'result'],
    registers: [registry],
  });
  new Gauge({
    name: 'tollgate_outbox_pending',
    help: 'Deliveries in the outbox not yet delivered nor dead, per webhook sink.',
    labelNames: ['sink'],
    registers: [registry],
    collect() {
      this.reset();
      for (const sink of read()) this.set({ sink: sink.name }, sink.pending);
    },
  });
  new Gauge({
    name: 'tollgate_export_lag_seconds',
    help: 'Age of the oldest ledger row an export sink has not received yet (0: caught up).',
    labelNames: ['sink'],
    registers: [registry],
    collect() {
      this.reset();
      for (const sink of read()) if (sink.lagSeconds !== undefined) this.set({ sink: sink.name }, sink.lagSeconds);
    },
  });
  return {
    recordDelivery: (sink, result) => delivered.inc({ sink, result }),
    watchSinks(next) {
      read = next;
    },
  };
}
