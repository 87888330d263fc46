/**
 * Decides when Redis has stopped answering. A plain per-command timer (ioredis'
 * `commandTimeout`) also fires on a healthy Redis that is working through a burst on the one
 * connection, or when the event loop is late and the timer runs before the reply already
 * waiting in the socket is read; in `open` mode that sends part of a burst to the per-instance
 * fallback and breaks exactness across instances.
 *
 * So a command fails only when Redis has been silent — no reply to any command of this
 * connection — for `silenceMs` since it was sent, checked after pending I/O is processed.
 * A dead or hung Redis still fails within ~`silenceMs`; a moving queue is never an outage,
 * but no command waits longer than `maxWaitMs` in any case.
 */
export class ReplyDeadline {
  private lastReplyAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly silenceMs: number,
    private readonly maxWaitMs: number,
    /** The error a command fails with: the caller's "store unavailable" type. */
    private readonly unavailable: (message: string) => Error,
  ) {}

  /** Settles like `command`, or rejects with `unavailable(...)` when Redis went silent or the command failed. */
  watch<T>(command: Promise<T>): Promise<T> {
    const sentAt = performance.now();
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout;
      // setImmediate runs after the poll phase: replies already received are counted first.
      const expire = (): void => void setImmediate(check);
      const check = (): void => {
        if (done) return;
        const now = performance.now();
        const silentFor = now - Math.max(sentAt, this.lastReplyAt);
        const waited = now - sentAt;
        if (silentFor < this.silenceMs && waited < this.maxWaitMs) {
          timer = setTimeout(expire, Math.min(this.silenceMs - silentFor, this.maxWaitMs - waited));
          return;
        }
        done = true;
        reject(this.unavailable(`redis gave no reply for ${Math.round(silentFor)} ms`));
      };
      timer = setTimeout(expire, this.silenceMs);
      command.then(
        (value) => {
          this.lastReplyAt = performance.now();
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          reject(this.unavailable(err instanceof Error ? err.message : String(err)));
        },
      );
    });
  }
}
