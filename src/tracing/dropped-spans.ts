import { createNoopMeter, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';

/** The SDK counts each span it processed; a span with an `error.type` (queue_full, an export error) was dropped. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/**
 * A MeterProvider for the span processor's own metrics (the SDK's self-observability): of all
 * it reports, only dropped spans matter here, and they go to `dropped`. Everything else is the
 * API's no-op meter.
 */
export function droppedSpansMeter(dropped: (count: number) => void): MeterProvider {
  const noop = createNoopMeter();
  const counter: Pick<Counter, 'add'> = {
    add: (count, attributes) => {
      if (attributes?.['error.type'] !== undefined) dropped(count);
    },
  };
  const meter = Object.create(noop) as Meter;
  meter.createCounter = ((name: string, options) => (name === PROCESSED_SPANS ? counter : noop.createCounter(name, options))) as Meter['createCounter'];
  return { getMeter: () => meter };
}
