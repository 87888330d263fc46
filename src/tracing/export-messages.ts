import type { Attributes } from '@opentelemetry/api';

/**
 * What a traced request leaves behind: one record of plain facts (ids, times, attributes), which
 * the request thread writes to a tape with the others of its shipment (record-tape.ts), and what
 * crosses to the export thread: that tape, with how many spans each record is (export-thread.ts,
 * export-worker.ts). There each record is written as OTLP protobuf spans (otlp-spans.ts).
 */

/**
 * One step of a request (an INTERNAL span): its name, when it started and ended (whole µs since
 * the request's start), its attributes. Its span id is made when the record is written as OTLP
 * (otlp-spans.ts): nothing outside the trace ever names a step.
 */
export interface StepFacts {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly attributes: Attributes;
  /** Set when the gateway failed the request (status ERROR), with this message. */
  readonly error?: string;
}

/** A span whose id the request thread made (the SERVER span, and the CLIENT span it sent upstream in `traceparent`). */
export interface SpanFacts extends StepFacts {
  readonly id: string;
}

/**
 * The caller's span the request continues (from its `traceparent`/`tracestate`). Its trace flags
 * are not kept: a span's OTLP flags are its own, and whether the request is sampled was decided
 * when it started.
 */
export interface RemoteParent {
  readonly spanId: string;
  /** As the SDK's TraceState serializes it (the propagator parsed the client's header): written to the spans as it is. */
  readonly traceState?: string;
}

/** A sampled request: the SERVER span, its steps (INTERNAL) and the upstream hop (CLIENT), under one trace id. */
export interface RequestRecord {
  readonly traceId: string;
  /** When the request started, ms on the request thread's performance clock: the spans' times count from it. */
  readonly start: number;
  readonly parent?: RemoteParent;
  readonly server: SpanFacts;
  readonly steps: readonly StepFacts[];
  readonly client?: SpanFacts;
}

/**
 * A sampled request that has ended, waiting for the export thread's next shipment: how many spans
 * it will be, and its record, built when the shipment is written (RequestTrace).
 */
export interface EndedTrace {
  spanCount(): number;
  record(): RequestRecord;
}

/** Whole µs from `start` to `at` (both ms on the performance clock). */
export const microsSince = (start: number, at: number): number => Math.round((at - start) * 1000);

/** The export thread's settings (workerData). */
export interface ExportThreadSettings {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly serviceName: string;
  /**
   * The request thread's performance.timeOrigin: the records' times are offsets from it, and the
   * spans' wall-clock times are written from it.
   */
  readonly timeOrigin: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMillis: number;
  readonly exportTimeoutMillis: number;
}

/** What the export thread starts with (workerData): its settings, and the count of spans posted to it that it has not taken yet. */
export interface ExportThreadData extends ExportThreadSettings {
  /** One Int32: the request thread adds a shipment's spans as it posts them, the export thread takes them off as it receives them (Atomics). */
  readonly spansInFlight: SharedArrayBuffer;
}

/**
 * Requests' spans, encoded (`ScopeSpans.spans` fields, one request after another), with where
 * each request's spans end in `bytes` and how many it has: the export queue keeps or drops whole
 * requests, and a batch holds whole requests.
 */
export interface EncodedRequests {
  readonly bytes: Uint8Array;
  readonly ends: readonly number[];
  readonly spans: readonly number[];
}

/** A shipment: its records on a tape (record-tape.ts, read one after another), and how many spans each is. */
export interface RecordShipment {
  readonly tape: Uint8Array;
  readonly spans: readonly number[];
}

/** Request thread → export thread: a shipment of records, or a flush or a shutdown to answer. */
export type ToExportThread = ({ readonly kind: 'records' } & RecordShipment) | { readonly kind: 'flush' | 'shutdown'; readonly id: number };

/** Export thread → request thread: set up and listening, spans it dropped or could not send, a flush or shutdown done. */
export type FromExportThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'dropped'; readonly count: number }
  | { readonly kind: 'done'; readonly id: number };
