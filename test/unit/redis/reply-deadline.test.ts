import { describe, expect, it } from 'vitest';
import { ReplyDeadline } from '../../../src/redis/index.js';
import { StoreUnavailableError } from '../../../src/limits/index.js';

const unavailable = (message: string): Error => new StoreUnavailableError(message);

/** A command whose reply the test decides when to deliver. */
function pendingReply<T>(): { promise: Promise<T>; reply(value: T): void } {
  let reply!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (reply = resolve));
  return { promise, reply };
}

/** Delivers a reply to a fresh command every `everyMs` until stopped: a Redis working through a queue. */
function steadyReplies(deadline: ReplyDeadline, everyMs: number): () => void {
  const timer = setInterval(() => {
    const other = pendingReply<string>();
    void deadline.watch(other.promise);
    other.reply('OK');
  }, everyMs);
  return () => clearInterval(timer);
}

describe('ReplyDeadline', () => {
  it('passes a reply through', async () => {
    await expect(new ReplyDeadline(50, 500, unavailable).watch(Promise.resolve(7))).resolves.toBe(7);
  });

  it('fails a command as store-unavailable when Redis stays silent for the limit', async () => {
    const started = performance.now();
    const error = await new ReplyDeadline(30, 3000, unavailable).watch(pendingReply<number>().promise).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('keeps waiting while replies to other commands keep arriving', async () => {
    const deadline = new ReplyDeadline(60, 3000, unavailable);
    const queued = pendingReply<string>();
    const stop = steadyReplies(deadline, 5);
    setTimeout(() => queued.reply('late but alive'), 150);
    try {
      await expect(deadline.watch(queued.promise)).resolves.toBe('late but alive');
    } finally {
      stop();
    }
  });

  it('gives up after the cap even while other replies arrive', async () => {
    const deadline = new ReplyDeadline(30, 120, unavailable);
    const stop = steadyReplies(deadline, 5);
    try {
      await expect(deadline.watch(pendingReply<string>().promise)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      stop();
    }
  });

  it('turns a command error into store-unavailable', async () => {
    await expect(new ReplyDeadline(50, 500, unavailable).watch(Promise.reject(new Error('Connection is closed.')))).rejects.toThrow(
      new StoreUnavailableError('Connection is closed.'),
    );
  });
});
