import { Transform, type TransformCallback } from 'node:stream';
import { JSONParser } from '@streamparser/json';
import { GatewayError } from '../errors.js';

const modelIdError = (message: string): GatewayError => new GatewayError(400, 'invalid_request', message, { connection: 'close' }, 'model_id');

/** Where held bytes are counted with every other body the gateway holds (`server.maxBufferedBytes`); take() throws when full. */
export interface HoldBudget {
  take(bytes: number): void;
  give(bytes: number): void;
}

const UNCOUNTED: HoldBudget = { take: () => undefined, give: () => undefined };

/**
 * Reads the top-level `model_id` of a training-job creation as its body streams past (SPEC
 * 13.1), without buffering the upload: bytes are held back only until `model_id` has been seen
 * (at most `holdLimit` bytes), then released once the caller allows it, and everything after
 * flows straight through. The JSON keeps being tokenized to its end: a second top-level
 * `model_id` — which the upstream's JSON decoder would take instead of the first — aborts the
 * upload before it completes, so the upstream never acts on it.
 */
export class ModelIdWatch extends Transform {
  /** Resolves with the body's top-level `model_id`; rejects with a 400 when there is none within the hold limit. */
  readonly modelId: Promise<string>;
  private held: Buffer[] | null = [];
  private heldBytes = 0;
  private found: string | undefined;
  private released = false;
  /** Found but not yet released: the stream waits here (backpressure), holding no more than it has. */
  private waiting: TransformCallback | null = null;
  private readonly parser = new JSONParser({ paths: ['$.model_id'], keepStack: false });
  private resolveId!: (id: string) => void;
  private rejectId!: (err: Error) => void;
  /** Why the body was refused, once it was (a second model_id may come in the very chunk of the first). */
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
    this.parser.onValue = ({ value }) => this.onModelId(value);
    this.parser.onError = () => {
      if (this.found === undefined) this.fail(modelIdError('The body must be a JSON object with a top-level "model_id".'));
      // After model_id: the upstream answers a malformed rest itself (422).
    };
  }

  /** Why the body was refused, if it was: release() must not be called then. */
  get refused(): GatewayError | undefined {
    return this.refusal;
  }

  /** Lets the held bytes and the rest of the body go (the model was found to be the caller's). */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const chunk of this.held ?? []) this.push(chunk);
    this.dropHeld();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.tokenize(chunk);
    if (this.destroyed) return callback();
    if (this.released) return callback(null, chunk);
    try {
      this.budget.take(chunk.length);
    } catch (err) {
      this.fail(err as GatewayError);
      return callback();
    }
    this.held!.push(chunk);
    this.heldBytes += chunk.length;
    if (this.found === undefined && this.heldBytes > this.holdLimit) {
      this.fail(modelIdError(`The body has no top-level "model_id" within its first ${this.holdLimit} bytes; put it first.`));
      return callback();
    }
    // Once model_id is known, the upload waits for the decision instead of filling memory.
    if (this.found === undefined) callback();
    else this.waiting = callback;
  }

  override _flush(callback: TransformCallback): void {
    if (this.found === undefined) this.fail(modelIdError('The body has no top-level "model_id".'));
    callback();
  }

  /** Destroyed from outside (the upload broke off, grew too large, stalled): nobody waits for a model_id any more. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.found === undefined) this.rejectId(error ?? modelIdError('The body ended before its top-level "model_id".'));
    this.dropHeld();
    callback(error);
  }

  private tokenize(chunk: Buffer): void {
    if (this.parser.isEnded) return;
    try {
      this.parser.write(chunk);
    } catch {
      // Reported through onError.
    }
  }

  private onModelId(value: unknown): void {
    if (this.found !== undefined) {
      this.fail(modelIdError('The body has more than one top-level "model_id".'));
      return;
    }
    if (typeof value !== 'string' || value === '') {
      this.fail(modelIdError('The body\'s top-level "model_id" must be a non-empty string.'));
      return;
    }
    this.found = value;
    this.resolveId(value);
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
