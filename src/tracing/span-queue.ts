import type { EncodedRequests } from './export-messages.js';
import { exportRequest, type ExportEnvelope } from './otlp-export.js';

/** One export: an ExportTraceServiceRequest, encoded, and how many spans it carries. */
export interface EncodedExport {
  readonly request: Uint8Array;
  readonly spans: number;
}

/** Where exports go: the SDK's OTLP/HTTP export delegate (retries, timeout, transport), given requests already encoded. */
export interface SpanExportDelegate {
  export(batch: EncodedExport, done: (exported: boolean) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface SpanQueueSettings {
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMillis: number;
  readonly exportTimeoutMillis: number;
}

/** A queued request's spans: where they lie in the bytes of the shipment they came in, and how many. */
interface QueuedRequest {
  readonly bytes: Uint8Array;
  readonly start: number;
  readonly end: number;
  readonly spans: number;
}

/**
 * The export thread's queue: what the SDK's BatchSpanProcessor does (a bounded queue, batches
 * of at most maxExportBatchSize spans leaving when full or after scheduledDelayMillis, one export
 * at a time, an export given up after exportTimeoutMillis, every span lost counted), on spans
 * held as the OTLP bytes the request thread wrote instead of span objects: an export is those
 * bytes behind the envelope. A batch holds whole requests.
 */
export class SpanQueue {
  /**
   * Queued requests, oldest first from `head`: their bytes stay in the shipments they arrived in
   * (handed over, not shared) and are copied once, into the export that takes them.
   */
  private queued: QueuedRequest[] = [];
  private head = 0;
  private queuedSpans = 0;
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: SpanQueueSettings,
    private readonly envelope: ExportEnvelope,
    private readonly delegate: SpanExportDelegate,
    private readonly dropped: (count: number) => void,
  ) {}

  /** Queues each request's spans, or drops and counts those of a request that would pass maxQueueSize. */
  add(requests: EncodedRequests): void {
    let start = 0;
    let lost = 0;
    let kept = 0;
    let keptBytes = 0;
    for (let i = 0; i < requests.ends.length; i++) {
      const end = requests.ends[i]!;
      const spans = requests.spans[i]!;
      if (this.queuedSpans + spans > this.settings.maxQueueSize) lost += spans;
      else {
        this.queued.push({ bytes: requests.bytes, start, end, spans });
        this.queuedSpans += spans;
        kept += 1;
        keptBytes += end - start;
      }
      start = end;
    }
    if (lost > 0) {
      this.dropped(lost);
      if (keptBytes * 2 < requests.bytes.length) this.copyOut(kept, keptBytes);
    }
    this.schedule();
  }

  /**
   * The last `count` requests queued, kept from a shipment that was mostly dropped, copied out
   * of it end to end: a few queued requests never hold a whole shipment's bytes.
   */
  private copyOut(count: number, bytes: number): void {
    const copy = new Uint8Array(bytes);
    let at = 0;
    for (let i = this.queued.length - count; i < this.queued.length; i++) {
      const { bytes: from, start, end, spans } = this.queued[i]!;
      copy.set(from.subarray(start, end), at);
      this.queued[i] = { bytes: copy, start: at, end: at + end - start, spans };
      at += end - start;
    }
  }

  /** Exports everything queued, and waits for exports under way. */
  async flush(): Promise<void> {
    while (this.exporting !== undefined || this.queuedSpans > 0) await (this.exporting ?? this.exportOne());
    await this.delegate.forceFlush();
  }

  async shutdown(): Promise<void> {
    await this.flush();
    await this.delegate.shutdown();
  }

  /** A full batch leaves now; a partial one when the delay since it began has passed. */
  private schedule(): void {
    if (this.exporting !== undefined || this.queuedSpans === 0) return;
    if (this.queuedSpans >= this.settings.maxExportBatchSize) void this.exportOne();
    else this.timer ??= setTimeout(() => void this.exportOne(), this.settings.scheduledDelayMillis).unref();
  }

  private exportOne(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queuedSpans === 0) return Promise.resolve();
    const batch = this.takeBatch();
    let settle: (exported: boolean) => void = () => undefined;
    const exporting = new Promise<void>((resolve) => {
      let settled = false;
      settle = (exported) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        if (!exported) this.dropped(batch.spans);
        if (this.exporting === exporting) this.exporting = undefined;
        resolve();
        this.schedule();
      };
    });
    // Set before the delegate is called: it may answer at once (the SDK's does, past its limit of exports under way).
    this.exporting = exporting;
    const timeout = setTimeout(() => settle(false), this.settings.exportTimeoutMillis).unref();
    try {
      this.delegate.export(batch, settle);
    } catch {
      settle(false);
    }
    return exporting;
  }

  /**
   * The oldest requests, up to maxExportBatchSize spans (at least one request), as one export:
   * their bytes copied into it a run at a time (requests that lie end to end in one shipment).
   */
  private takeBatch(): EncodedExport {
    const { queued } = this;
    const parts: Uint8Array[] = [];
    let spans = 0;
    let i = this.head;
    while (i < queued.length && (i === this.head || spans + queued[i]!.spans <= this.settings.maxExportBatchSize)) {
      const first = queued[i]!;
      let end = first.end;
      spans += first.spans;
      // The requests right after it in the same shipment (none dropped between), while the batch has room.
      while (++i < queued.length && queued[i]!.bytes === first.bytes && queued[i]!.start === end && spans + queued[i]!.spans <= this.settings.maxExportBatchSize) {
        end = queued[i]!.end;
        spans += queued[i]!.spans;
      }
      parts.push(first.bytes.subarray(first.start, end));
    }
    this.head = i;
    // Taken requests are forgotten in a slice now and then, not shifted one at a time.
    if (this.head === queued.length) {
      this.queued = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.queued = queued.slice(this.head);
      this.head = 0;
    }
    this.queuedSpans -= spans;
    return { request: exportRequest(this.envelope, ...parts), spans };
  }
}
