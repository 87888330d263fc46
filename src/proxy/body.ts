import type { IncomingMessage } from 'node:http';
import { Stream, Transform, type TransformCallback } from 'node:stream';
import { errors, type GatewayError } from '../errors.js';
import type { BufferBudget } from './buffer-budget.js';

export function tooLarge(limit: number): GatewayError {
  // Closing the connection stops a client from streaming the rest of an oversized body at us.
  return errors.bodyTooLarge(limit);
}

/** A client that stopped sending its body: 408, and the connection is closed (what is left of it will not come). */
export function bodyStalled(idleMs: number): GatewayError {
  return errors.bodyStalled(idleMs);
}

/** Declared Content-Length, or undefined when the body is chunked / absent. */
function declaredLength(req: IncomingMessage): number | undefined {
  const header = req.headers['content-length'];
  if (header === undefined) return undefined;
  const value = Number(header);
  return Number.isFinite(value) ? value : undefined;
}

/** How a buffered body is read: its size limit, the longest silence allowed, the shared memory budget. */
export interface ReadLimits {
  readonly limit: number;
  readonly idleMs: number;
  readonly budget: BufferBudget;
  /**
   * Bodies larger than this are read into shared memory, chunk by chunk as they arrive: no
   * 10 MB copy holds up the loop at the end, and a worker reads them without a copy of its own.
   */
  readonly sharedAbove?: number;
}

/** A body read whole, and the share of the memory budget it holds until release(). */
export interface BufferedRequest {
  readonly bytes: Buffer;
  /** Gives its bytes back to the budget (idempotent). */
  release(): void;
}

/** One body being read: its chunks, its share of the memory budget, and the listeners that feed it. */
class BodyReader {
  private chunks: Buffer[] = [];
  /** A large body's shared memory, filled as chunks arrive (see ReadLimits.sharedAbove). */
  private shared: Buffer | undefined;
  private received = 0;
  /** Bytes taken from the budget so far, given back on failure or by release(). */
  private taken = 0;
  private readonly idle: NodeJS.Timeout;
  // Own functions, not prototype methods: req.off() must be handed the very listener req.on() got.
  private readonly onData = (chunk: Buffer): void => this.add(chunk);
  private readonly onEnd = (): void => this.succeed();
  private readonly onError = (err: Error): void => this.fail(err);
  /** Also the result's release(): idempotent, as taken drops to 0. */
  private readonly give = (): void => {
    this.budget.give(this.taken);
    this.taken = 0;
  };

  constructor(
    private readonly req: IncomingMessage,
    private readonly limit: number,
    idleMs: number,
    private readonly budget: BufferBudget,
    private readonly resolve: (body: BufferedRequest) => void,
    private readonly reject: (error: Error) => void,
    private readonly declared: number | undefined,
    private readonly sharedAbove: number,
  ) {
    this.idle = setTimeout(() => this.fail(bodyStalled(idleMs)), idleMs);
    if (declared !== undefined && declared > sharedAbove) this.shareFrom([]);
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
  }

  private add(chunk: Buffer): void {
    const at = this.received;
    this.received += chunk.length;
    if (this.received > this.limit) return this.fail(tooLarge(this.limit));
    try {
      this.budget.take(chunk.length);
    } catch (err) {
      return this.fail(err as Error);
    }
    this.taken += chunk.length;
    if (this.shared !== undefined && this.received <= this.shared.length) {
      chunk.copy(this.shared, at);
    } else {
      this.chunks.push(chunk);
      if (this.shared === undefined && this.received > this.sharedAbove) this.shareFrom(this.chunks);
    }
    this.idle.refresh();
  }

  /**
   * From here on, chunks are copied into shared memory as they arrive, so no large copy ever
   * holds up the loop. Its pages are zeroed lazily: the declared length, or the limit of a
   * chunked body, costs only what is written.
   */
  private shareFrom(held: Buffer[]): void {
    const shared = Buffer.from(new SharedArrayBuffer(this.declared ?? this.limit));
    let at = 0;
    for (const chunk of held) at += chunk.copy(shared, at);
    this.shared = shared;
    this.chunks = [];
  }

  private succeed(): void {
    this.stopListening();
    this.resolve({ bytes: this.bytes(), release: this.give });
  }

  private bytes(): Buffer {
    const { chunks, received, shared } = this;
    // Node's parser delivers no more than a declared length: `chunks` is then empty.
    if (shared !== undefined && chunks.length === 0) return received === shared.length ? shared : shared.subarray(0, received);
    if (shared !== undefined) chunks.unshift(shared);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
  }

  private fail(error: Error): void {
    this.stopListening();
    this.req.pause();
    this.give();
    this.reject(error);
  }

  private stopListening(): void {
    clearTimeout(this.idle);
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('error', this.onError);
  }
}

/**
 * Buffers a request body of at most `limit` bytes (chat bodies, which must be validated before
 * they are forwarded). Rejects with 413 as soon as the declared or received size passes it, with
 * 408 when no byte arrives for `idleMs`, and with 503 when the budget of buffered bytes is spent.
 */
export function readBody(req: IncomingMessage, { limit, idleMs, budget, sharedAbove = Infinity }: ReadLimits): Promise<BufferedRequest> {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    // Lives on in req's listeners and its idle timer until it settles the promise.
    new BodyReader(req, limit, idleMs, budget, resolve, reject, declared, sharedAbove);
  });
}

/**
 * A pass-through that counts streamed body bytes (preview uploads, never buffered) and fails
 * with 413 once they pass the limit, or with 408 when the client stops sending for `idleMs`.
 * Chunks are passed on as they are: no copies.
 */
export class BodyLimitCounter extends Transform {
  private received = 0;

  /** Bytes passed on so far. */
  get bytes(): number {
    return this.received;
  }

  private readonly idle: NodeJS.Timeout;

  constructor(
    private readonly limit: number,
    idleMs: number,
    source: IncomingMessage,
  ) {
    super();
    this.idle = setTimeout(() => this.destroy(bodyStalled(idleMs)), idleMs);
    // The idle clock stops when the client has sent everything (or the exchange is over).
    const stop = (): void => clearTimeout(this.idle);
    source.once('end', stop);
    source.once('close', stop);
    this.once('close', stop);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit) {
      callback(tooLarge(this.limit));
      return;
    }
    this.idle.refresh();
    callback(null, chunk);
  }
}

/** Throws 413 before any byte is forwarded when the declared length already exceeds the limit. */
export function assertDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
}

/**
 * A body the gateway has already read (a chat request), as the stream http-proxy-3 takes in
 * `buffer`. The library only pipe()s that stream into the upstream request, so this writes
 * the bytes in one call and ends it: the same bytes as a PassThrough, without the stream
 * machinery (state, buffering, listeners, extra ticks) on every request.
 */
export class BufferedBody extends Stream {
  constructor(readonly bytes: Buffer) {
    super();
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T): T {
    destination.end(this.bytes);
    return destination;
  }
}
