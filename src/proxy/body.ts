import type { IncomingMessage } from 'node:http';
import { Stream, Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../errors.js';

export function tooLarge(limit: number): GatewayError {
  // Closing the connection stops a client from streaming the rest of an oversized body at us.
  return new GatewayError(413, 'request_too_large', `The request body exceeds the limit of ${limit} bytes.`, { connection: 'close' });
}

/** Declared Content-Length, or undefined when the body is chunked / absent. */
function declaredLength(req: IncomingMessage): number | undefined {
  const header = req.headers['content-length'];
  if (header === undefined) return undefined;
  const value = Number(header);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Buffers a request body of at most `limit` bytes (chat bodies, which must be validated before
 * they are forwarded). Rejects with 413 as soon as the declared or received size passes it.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * A pass-through that counts streamed body bytes (preview uploads, never buffered) and fails
 * with 413 once they pass the limit. Chunks are passed on as they are: no copies.
 */
export class BodyLimitCounter extends Transform {
  private received = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit) {
      callback(tooLarge(this.limit));
      return;
    }
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
