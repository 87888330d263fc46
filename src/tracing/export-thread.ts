import { Worker } from 'node:worker_threads';
import { type EndedTrace, type ExportThreadData, type ExportThreadSettings, type FromExportThread, type RequestRecord, type ToExportThread } from './export-messages.js';
import { RecordTapeWriter } from './record-tape.js';

/**
 * Traced requests leave the request thread in small batches, at most this often (ms) or this
 * many at a time: short, so the bytes waiting here stay few.
 */
const SHIP_DELAY_MS = 50;
const SHIP_BATCH = 64;

/** A request's record, or undefined when it cannot be built (its spans are then dropped and counted, never thrown from a timer). */
function recordOf(trace: EndedTrace): RequestRecord | undefined {
  try {
    return trace.record();
  } catch {
    return undefined;
  }
}

/** A counter the request thread and the export thread share. */
const newCounter = (): Int32Array => new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));

/** What the export thread reports back to the gateway. */
export interface ExportThreadEvents {
  spansDropped(count: number): void;
}

/**
 * The export thread's heap, bounded: it holds at most maxQueueSize spans and the batch on its
 * way, a few MB. A small young generation keeps its resident memory small (a worker's default
 * grows to the main thread's size); past the old-generation bound the thread dies, its spans are
 * counted as dropped, and a new one starts.
 */
const EXPORT_THREAD_HEAP = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 } as const;

/** The worker file beside this module: the compiled .js, or the .ts sources through tsx. */
function exportWorkerUrl(): URL {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(fromSource ? './export-worker-from-source.mjs' : './export-worker.js', import.meta.url);
}

/**
 * The request thread's side of the export thread (export-worker.ts): ended traced requests wait
 * here (at most SHIP_BATCH, SHIP_DELAY_MS), then their records are built and written together to
 * a tape (record-tape.ts), and the tape goes there; it writes them as OTLP spans, queues, batches
 * and sends them.
 *
 * Bounded like the batch processor it feeds: past `maxQueueSize` spans on their way (waiting
 * here or not yet taken by the thread), a request's spans are dropped and counted, never held.
 * If the thread dies, a new one is started; what the old one held is lost, and what it had not
 * taken is counted as dropped. If it cannot start at all, every span is dropped and counted.
 */
export class ExportThread {
  private worker: Worker;
  private readonly tape = new RecordTapeWriter();
  /** Requests waiting to be written and sent, and their spans; spans posted to the thread that it has not taken off its port yet. */
  private pending: EndedTrace[] = [];
  private pendingSpans = 0;
  /**
   * Spans posted to the thread that it has not taken off its port yet: one Int32 shared with
   * that thread, added to here and taken from there (Atomics), rather than a message back per shipment.
   */
  private inFlight = newCounter();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private broken = false;
  private nextId = 0;
  private readonly waiting = new Map<number, () => void>();

  constructor(
    private readonly settings: ExportThreadSettings,
    private readonly events: ExportThreadEvents,
    /** The thread's entry file (a test's stand-in; the gateway's is beside this module). */
    private readonly workerUrl: URL = exportWorkerUrl(),
  ) {
    this.worker = this.start();
  }

  /** Queues a sampled request's spans for export, or drops and counts them when the queue is full. */
  add(trace: EndedTrace): void {
    if (this.closed) return;
    const spans = trace.spanCount();
    if (this.broken || this.pendingSpans + Atomics.load(this.inFlight, 0) + spans > this.settings.maxQueueSize) {
      this.events.spansDropped(spans);
      return;
    }
    this.pending.push(trace);
    this.pendingSpans += spans;
    if (this.pending.length >= SHIP_BATCH) this.ship();
    else this.timer ??= setTimeout(() => this.ship(), SHIP_DELAY_MS).unref();
  }

  /** Sends what is waiting and has the thread export all it holds. */
  flush(): Promise<void> {
    return this.ask('flush');
  }

  /** Sends what is waiting, has the thread export it and stop, then ends the thread. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.ask('shutdown');
    this.closed = true;
    await this.worker.terminate();
  }

  /**
   * Builds the waiting requests' records, writes them to the tape and posts it to the thread.
   * They are built and written here, a batch at a time, not as each request ends: between two
   * requests the rest of the gateway's work pushes this code and its data out of the CPU's
   * caches (docs/tracing.md, "Cost"). The tape, not the OTLP spans: writing the spans is the
   * larger part of that work, and the export thread does it (record-tape.ts).
   */
  private ship(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const counts: number[] = [];
    let written = 0;
    for (const trace of this.pending) {
      const record = recordOf(trace);
      if (record === undefined || !this.tape.write(record)) continue;
      const spans = trace.spanCount();
      counts.push(spans);
      written += spans;
    }
    const unwritten = this.pendingSpans - written;
    if (unwritten > 0) this.events.spansDropped(unwritten);
    if (counts.length > 0) {
      // A copy in an ArrayBuffer of its own, handed over to the thread (the tape's buffer is reused).
      const tape = new Uint8Array(this.tape.bytes());
      Atomics.add(this.inFlight, 0, written);
      this.worker.postMessage({ kind: 'records', tape, spans: counts } satisfies ToExportThread, [tape.buffer]);
    }
    this.clearPending();
  }

  /** Forgets the requests waiting here (shipped, or never to be). */
  private clearPending(): void {
    this.tape.reset();
    this.pending = [];
    this.pendingSpans = 0;
  }

  private ask(kind: 'flush' | 'shutdown'): Promise<void> {
    if (this.closed || this.broken) return Promise.resolve();
    this.ship();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ kind, id } satisfies ToExportThread);
    });
  }

  private start(): Worker {
    this.inFlight = newCounter();
    const workerData: ExportThreadData = { ...this.settings, spansInFlight: this.inFlight.buffer as SharedArrayBuffer };
    const worker = new Worker(this.workerUrl, { workerData, execArgv: [], resourceLimits: EXPORT_THREAD_HEAP });
    // Tracing never keeps the gateway from exiting; shutdown() waits for the thread itself.
    worker.unref();
    // Started: its module ran to the end (a thread that throws while loading is not).
    let started = false;
    worker.on('message', (message: FromExportThread) => {
      if (message.kind === 'ready') started = true;
      else this.heard(message);
    });
    worker.on('error', () => undefined);
    worker.on('exit', () => this.lost(worker, started));
    return worker;
  }

  private heard(message: Exclude<FromExportThread, { kind: 'ready' }>): void {
    if (message.kind === 'dropped') this.events.spansDropped(message.count);
    else {
      this.waiting.get(message.id)?.();
      this.waiting.delete(message.id);
    }
  }

  /**
   * The thread ended: what it had not taken is lost (counted). A new one takes over, unless
   * tracing is closing or this one never started (a second would fail the same way).
   */
  private lost(worker: Worker, started: boolean): void {
    if (worker !== this.worker) return;
    const lost = Atomics.load(this.inFlight, 0) + (started ? 0 : this.pendingSpans);
    if (lost > 0) this.events.spansDropped(lost);
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
    if (this.closed) return;
    if (started) this.worker = this.start();
    else {
      this.broken = true;
      this.clearPending();
    }
  }
}
