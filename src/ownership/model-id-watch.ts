import { Transform, type TransformCallback } from 'node:stream';
import { errors, GatewayError } from '../errors.js';
import { JobModelIdReader } from './owner-fields.js';

/** Where held bytes are counted with every other body the gateway holds (`server.maxBufferedBytes`); take() throws when full. */
export interface HoldBudget {
  take(bytes: number): void;
  give(bytes: number): void;
}

const UNCOUNTED: HoldBudget = { take: () => undefined, give: () => undefined };

/** The refusal of a body whose top-level `model_id` did not come within what may be held back. */
export function noModelIdWithin(holdLimit: number, field = 'model_id'): GatewayError {
  return errors.modelIdNotWithinHoldLimit(holdLimit, field);
}

/**
 * Reads the top-level `model_id` of a training-job creation as its body streams past (SPEC
 * 13.1). Bytes are held back (at most `holdLimit`, counted in the budget) until the first
 * top-level `model_id` has been read and the caller, having checked it, calls release(); then
 * the body flows on as it arrives. The upstream's Python takes the *last* of duplicate keys and
 * reads NaN and the rest of its dialect, so every byte keeps being read exactly as Python reads
 * it, and the last chunk received is always kept back: the upstream (which parses only a whole
 * body) gets the end of the body only once the read has found it certain. A body found
 * uncertain after release errors this stream, which aborts the upstream request: it never has
 * the whole body, so never acts on it.
 */
export class ModelIdWatch extends Transform {
  /** Resolves with the body's first top-level `model_id`; rejects with a 400 when there is none to be had with certainty. */
  readonly modelId: Promise<string>;
  private readonly reader: JobModelIdReader;
  /** Bytes held before release (counted in the budget). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** After release: the last chunk received, sent only once another arrives or the body is certain. */
  private tail: Buffer | undefined;
  private released = false;
  /** Found, not yet released, and holding all it may: the upload waits here (backpressure). */
  private waiting: TransformCallback | null = null;
  /** The body has ended and was found certain; the stream ends once released. */
  private ending: TransformCallback | null = null;
  private resolveId!: (id: string) => void;
  private rejectId!: (err: Error) => void;
  /** Why the body was refused, once it was. */
  private refusal: GatewayError | undefined;

  constructor(
    private readonly holdLimit: number,
    private readonly budget: HoldBudget = UNCOUNTED,
    /** The top-level field held for: a job creation's `model_id`, or a config route's `checks-body` field. */
    field = 'model_id',
  ) {
    super();
    this.reader = new JobModelIdReader(field);
    this.modelId = new Promise<string>((resolve, reject) => {
      this.resolveId = resolve;
      this.rejectId = reject;
    });
    // The caller may never wait (a refusal before this step): an unheard rejection is not an error,
    // nor is an 'error' before anyone forwards this stream (the refusal is read from `refused`).
    this.modelId.catch(() => undefined);
    this.on('error', () => undefined);
  }

  /** Why the body was refused, if it was: release() does nothing then. */
  get refused(): GatewayError | undefined {
    return this.refusal;
  }

  /** Lets the body go (its model was found to be the caller's): what is held now, the rest as it comes. */
  release(): void {
    if (this.released || this.refusal || this.reader.modelId === undefined) return;
    this.released = true;
    const held = this.held;
    this.dropHeld();
    if (this.ending) {
      for (const chunk of held) this.push(chunk);
      const ending = this.ending;
      this.ending = null;
      return ending();
    }
    this.tail = held.pop();
    for (const chunk of held) this.push(chunk);
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.refusal) return callback();
    if (!this.scan(chunk)) return callback();
    if (this.released) {
      if (this.tail) this.push(this.tail);
      this.tail = chunk;
      return callback();
    }
    try {
      this.budget.take(chunk.length);
    } catch (err) {
      this.fail(err as GatewayError);
      return callback();
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    // Found and being checked: read on while it fits, then wait for the decision.
    if (this.reader.modelId !== undefined && this.heldBytes >= this.holdLimit) this.waiting = callback;
    else callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.refusal) return callback();
    try {
      this.reader.end();
    } catch (err) {
      this.fail(err as GatewayError);
      return callback();
    }
    if (!this.released) {
      this.ending = callback;
      return;
    }
    // Certain: the end of the body may go.
    if (this.tail) this.push(this.tail);
    this.tail = undefined;
    callback();
  }

  /** Destroyed from outside (the upload broke off, grew too large, stalled): nobody waits for a model_id any more. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.rejectId(error ?? errors.modelIdBodyEnded(this.reader.field));
    this.dropHeld();
    this.tail = undefined;
    callback(error);
  }

  /**
   * Reads the chunk as Python would; false when that refused the body. The first `model_id`
   * must come within `holdLimit` bytes; it is announced once the whole chunk it came in has
   * been read, so a refusal later in that same chunk comes first.
   */
  private scan(chunk: Buffer): boolean {
    const before = this.reader.modelId;
    try {
      const room = this.holdLimit - this.heldBytes;
      if (before === undefined && !this.released && chunk.length > room) {
        this.reader.write(chunk.subarray(0, Math.max(room, 0)));
        if (this.reader.modelId === undefined) throw noModelIdWithin(this.holdLimit, this.reader.field);
        this.reader.write(chunk.subarray(room));
      } else {
        this.reader.write(chunk);
      }
    } catch (err) {
      this.fail(err as GatewayError);
      return false;
    }
    if (before === undefined && this.reader.modelId !== undefined) this.resolveId(this.reader.modelId);
    return true;
  }

  private fail(error: GatewayError): void {
    this.refusal ??= error;
    this.rejectId(error);
    this.dropHeld();
    this.destroy(error);
  }

  /** The held chunks are gone (sent on or dropped): their bytes leave the budget. */
  private dropHeld(): void {
    this.held = [];
    this.budget.give(this.heldBytes);
    this.heldBytes = 0;
  }
}
