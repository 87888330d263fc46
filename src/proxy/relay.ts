import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { endToEndHeaders } from './headers.js';

/** Inspects (and may rewrite) the bytes relayed to the client — the metering tap. */
export interface BodyTap<R extends { tail: Buffer | null } = { tail: Buffer | null }> {
  /** True when the tap may change the bytes, so an upstream Content-Length would be wrong. */
  readonly rewrites: boolean;
  write(chunk: Buffer): Buffer;
  /** Called exactly once, when the relay is over (completed or not). */
  end(): R;
}

export interface RelayOutcome<R> {
  /** The upstream body was relayed to its end (false: upstream broke off, stalled, or the client left). */
  readonly completed: boolean;
  /** The upstream sent no body byte for the idle timeout and was cut (the client saw a truncated response). */
  readonly stalled: boolean;
  /** What the tap saw, when there was one. */
  readonly tapResult: R | undefined;
}

/**
 * Relays an upstream response to the client chunk by chunk, honouring backpressure.
 * `ownHeaders` (request id, rate-limit headers) win over upstream headers of the same name.
 * With a tap that may drop bytes, Content-Length is removed so the client is not misled.
 * An upstream that sends nothing for `idleTimeoutMs` (while the client is not the one
 * holding it back) is cut: the client sees a truncated response, never a clean end.
 */
export function relayResponse<R extends { tail: Buffer | null }>(
  upstream: IncomingMessage,
  res: ServerResponse,
  ownHeaders: OutgoingHttpHeaders,
  tap: BodyTap<R> | undefined,
  idleTimeoutMs: number,
  onDone: (outcome: RelayOutcome<R>) => void,
): void {
  const headers = endToEndHeaders(upstream.headers);
  for (const name in ownHeaders) headers[name] = ownHeaders[name];
  if (tap?.rewrites) delete headers['content-length'];
  res.writeHead(upstream.statusCode ?? 502, headers);

  let finished = false;
  const finish = (completed: boolean, stalled = false): R | undefined => {
    if (finished) return undefined;
    finished = true;
    clearTimeout(idle);
    const tapResult = tap?.end();
    onDone({ completed, stalled, tapResult });
    return tapResult;
  };
  // While the client holds the relay back (backpressure), silence is not the upstream's fault.
  let waitingForClient = false;
  const idle = setTimeout(() => {
    if (waitingForClient) {
      idle.refresh();
      return;
    }
    upstream.destroy();
    res.destroy();
    finish(false, true);
  }, idleTimeoutMs);

  const resume = (): void => {
    waitingForClient = false;
    idle.refresh();
    upstream.resume();
  };
  upstream.on('data', (chunk: Buffer) => {
    idle.refresh();
    const out = tap ? tap.write(chunk) : chunk;
    if (out.length > 0 && !res.write(out)) {
      // Paused, no more 'data' until the drain: one listener at a time, only when needed.
      upstream.pause();
      waitingForClient = true;
      res.once('drain', resume);
    }
  });
  upstream.on('end', () => {
    const tail = finish(true)?.tail;
    if (tail) res.end(tail);
    else res.end();
  });
  // Upstream broke off mid-body: the client must see a truncated response, not a clean end.
  // (Node emits 'aborted' and then this 'error' for a response cut short; 'error' covers both.)
  upstream.on('error', () => {
    res.destroy();
    finish(false);
  });
  // Prepended: whatever the tap has read (the usage chunk of a stream the client leaves right
  // after it) must be known before anything else hears the close and settles the exchange.
  res.prependListener('close', () => {
    if (!res.writableFinished) {
      upstream.destroy();
      finish(false);
    }
  });
}
