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

/** Upstream headers minus hop-by-hop ones, ours over theirs, and no Content-Length a rewriting tap would falsify. */
function writeResponseHead(upstream: IncomingMessage, res: ServerResponse, ownHeaders: OutgoingHttpHeaders, rewrites: boolean): void {
  const headers = endToEndHeaders(upstream.headers);
  for (const name in ownHeaders) headers[name] = ownHeaders[name];
  if (rewrites) delete headers['content-length'];
  res.writeHead(upstream.statusCode ?? 502, headers);
}

/** One upstream body on its way to the client: the idle clock, backpressure, and its single ending. */
class BodyRelay<R extends { tail: Buffer | null }> {
  private finished = false;
  // While the client holds the relay back (backpressure), silence is not the upstream's fault.
  private waitingForClient = false;
  private readonly idle: NodeJS.Timeout;
  /** The 'drain' listener: made once per relay, added only while the client pushes back. */
  private readonly resume = (): void => {
    this.waitingForClient = false;
    this.idle.refresh();
    this.upstream.resume();
  };

  constructor(
    private readonly upstream: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly tap: BodyTap<R> | undefined,
    private readonly onDone: (outcome: RelayOutcome<R>) => void,
    idleTimeoutMs: number,
  ) {
    this.idle = setTimeout(() => this.cutIfSilent(), idleTimeoutMs);
  }

  write(chunk: Buffer): void {
    this.idle.refresh();
    const out = this.tap ? this.tap.write(chunk) : chunk;
    if (out.length > 0 && !this.res.write(out)) {
      // Paused, no more 'data' until the drain: one listener at a time, only when needed.
      this.upstream.pause();
      this.waitingForClient = true;
      this.res.once('drain', this.resume);
    }
  }

  end(): void {
    const tail = this.finish(true)?.tail;
    if (tail) this.res.end(tail);
    else this.res.end();
  }

  /** The upstream broke off mid-body: the client must see a truncated response, not a clean end. */
  breakOff(): void {
    this.res.destroy();
    this.finish(false);
  }

  clientClosed(): void {
    if (!this.res.writableFinished) {
      this.upstream.destroy();
      this.finish(false);
    }
  }

  private cutIfSilent(): void {
    if (this.waitingForClient) {
      this.idle.refresh();
      return;
    }
    this.upstream.destroy();
    this.res.destroy();
    this.finish(false, true);
  }

  /** Reports the outcome once, whichever ending came first; returns what the tap saw. */
  private finish(completed: boolean, stalled = false): R | undefined {
    if (this.finished) return undefined;
    this.finished = true;
    clearTimeout(this.idle);
    const tapResult = this.tap?.end();
    this.onDone({ completed, stalled, tapResult });
    return tapResult;
  }
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
  writeResponseHead(upstream, res, ownHeaders, tap?.rewrites === true);
  const relay = new BodyRelay(upstream, res, tap, onDone, idleTimeoutMs);
  upstream.on('data', (chunk: Buffer) => relay.write(chunk));
  upstream.on('end', () => relay.end());
  // (Node emits 'aborted' and then this 'error' for a response cut short; 'error' covers both.)
  upstream.on('error', () => relay.breakOff());
  // Prepended: whatever the tap has read (the usage chunk of a stream the client leaves right
  // after it) must be known before anything else hears the close and settles the exchange.
  res.prependListener('close', () => relay.clientClosed());
}
