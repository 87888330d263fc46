import { createNoopMeter, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';

/**
 * The SDK's BatchSpanProcessor drops spans without a word to its caller: when its queue is full,
 * and when an export fails or times out. It does count each span it is done with on its own
 * meter (`selfObsMeterProvider`, the SDK's self-observability), a span it gave up carrying an
 * `error.type` (`queue_full`, or the export's error). This meter provider hears that one counter
 * and passes the dropped spans on; every other instrument is the API's no-op.
 */

/** The processor's counter of spans it is done with (OTel semantic conventions, SDK metrics). */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

export function droppedSpansMeter(spansDropped: (count: number) => void): MeterProvider {
  const noop = createNoopMeter();
  const processed: Pick<Counter, 'add'> = {
    add: (count, attributes) => {
      if (attributes?.['error.type'] !== undefined) spansDropped(count);
    },
  };
  const meter: Meter = Object.create(noop) as Meter;
  meter.createCounter = ((name, options) => (name === PROCESSED_SPANS ? processed : noop.createCounter(name, options))) as Meter['createCounter'];
  return { getMeter: () => meter };
}
