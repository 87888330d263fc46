import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../errors.js';
import { readJobModelId } from './owner-fields.js';

/** Where held bytes are counted with every other body the gateway holds (`server.maxBufferedBytes`); take() throws when full. */
export interface HoldBudget {
  take(bytes: number): void;
  give(bytes: number): void;
}

const UNCOUNTED: HoldBudget = { take: () => undefined, give: () => undefined };

/** The refusal of a body too long to be read whole before anything is forwarded. */
export function tooLongToRead(holdLimit: number): GatewayError {
  return new GatewayError(
    400,
    'invalid_request',
    `The body is over ${holdLimit} bytes (server.bodyLimit): its top-level "model_id" cannot be read with certainty.`,
    // The rest of the upload is not read: the connection cannot carry another request.
    { connection: 'close' },
    'model_id',
  );
}

/**
 * Reads the top-level `model_id` of a training-job creation as its body streams past (SPEC
 * 13.1). The upstream's Python takes the *last* of duplicate keys and reads NaN and the rest of
 * its dialect, so `model_id` is certain only once the whole body has been read: every byte is
 * held back (at most `holdLimit`, counted in the budget) until the body has ended and been read
 * exactly as Python reads it, then released to flow on once the caller allows it. A body that
 * cannot be read with certainty is refused and nothing of it is ever forwarded.
 */
export class ModelIdWatch extends Transform {
  /** Resolves with the body's top-level `model_id`; rejects with a 400 when it is not certain. */
  readonly modelId: Promise<string>;
  private held: Buffer[] | null = [];
  private heldBytes = 0;
  private found: string | undefined;
  private released = false;
  /** The body has ended and been read; the stream ends once the held bytes are released. */
  private ending: TransformCallback | null = null;
  private resolveId!: (id: string) => void;
  private rejectId!: (err: Error) => void;
  /** Why the body was refused, once it was. */
  private refusal: GatewayError | undefined;

  constructor(
    private readonly holdLimit: number,
    private readonly budget: HoldBudget = UNCOUNTED,
  ) {
    super();
    this.modelId = new Promise<string>((resolve, reject) => {
      this.resolveId = resolve;
      this.rejectId = reject;
    });
    // The caller may never wait (a refusal before this step): an unheard rejection is not an error,
    // nor is an 'error' before anyone forwards this stream (the refusal is read from `refused`).
    this.modelId.catch(() => undefined);
    this.on('error', () => undefined);
  }

  /** Why the body was refused, if it was: release() must not be called then. */
  get refused(): GatewayError | undefined {
    return this.refusal;
  }

  /** Lets the held body go (its model was found to be the caller's). */
  release(): void {
    if (this.released || this.found === undefined) return;
    this.released = true;
    for (const chunk of this.held ?? []) this.push(chunk);
    this.dropHeld();
    const ending = this.ending;
    this.ending = null;
    ending?.();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.heldBytes + chunk.length > this.holdLimit) {
      this.fail(tooLongToRead(this.holdLimit));
      return callback();
    }
    try {
      this.budget.take(chunk.length);
    } catch (err) {
      this.fail(err as GatewayError);
      return callback();
    }
    this.held!.push(chunk);
    this.heldBytes += chunk.length;
    callback();
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.found = readJobModelId(Buffer.concat(this.held!));
    } catch (err) {
      this.fail(err as GatewayError);
      return callback();
    }
    this.ending = callback;
    this.resolveId(this.found);
  }

  /** Destroyed from outside (the upload broke off, grew too large, stalled): nobody waits for a model_id any more. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.found === undefined) this.rejectId(error ?? new GatewayError(400, 'invalid_request', 'The body ended before it could be read.', {}, 'model_id'));
    this.dropHeld();
    callback(error);
  }

  private fail(error: GatewayError): void {
    this.refusal ??= error;
    this.rejectId(error);
    this.dropHeld();
    this.destroy(error);
  }

  /** The held chunks are gone (sent on or dropped): their bytes leave the budget. */
  private dropHeld(): void {
    if (this.held === null) return;
    this.held = null;
    this.budget.give(this.heldBytes);
  }
}
