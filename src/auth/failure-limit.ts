import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import type { FailureLimitConfig } from '../config/index.js';
import { formatGoDuration } from '../duration.js';
import { ReplyDeadline, type RedisConnection } from '../redis/index.js';
import { AuthFailure } from './failure.js';

/** What the limiters are built with while the limit is off, so a reload can turn it on. */
const DEFAULT_LIMIT = { perMinute: 30, blockSeconds: 60 } as const;
const WINDOW_SECONDS = 60;
/** Addresses remembered as having failed (by default); past it the oldest is forgotten (its count stays in the limiter). */
const MAX_SUSPECTS = 100_000;

export interface AuthFailureLimitOptions {
  /** `redis.keyPrefix`: counters are `<prefix>auth-failures:<address>`. */
  readonly keyPrefix: string;
  /** `redis.commandTimeoutMs`: how long Redis may be silent before the insurance limiter answers. */
  readonly replySilenceMs: number;
  /** A Redis call failed or was skipped (the insurance limiter answered it). */
  readonly onStoreError: () => void;
  /** How many failing addresses this instance remembers (default 100,000; a test's is small). */
  readonly maxSuspects?: number;
}

/**
 * SPEC 15, floods of bad credentials: counts 401s per client address with rate-limiter-flexible
 * (RateLimiterRedis over the gateway's Redis connection, so the count holds across instances,
 * insured by a RateLimiterMemory; memory alone without Redis). An address that reached
 * `perMinute` failures is refused for `blockSeconds` before any key is looked at.
 */
export class AuthFailureLimit {
  private readonly insurance: RateLimiterMemory;
  private readonly limiter: RateLimiterMemory | RateLimiterRedis;
  /** Addresses that failed on this instance within a window and a block: the only ones looked up before their key check. */
  private readonly suspects: RecentAddresses;

  constructor(
    private settings: FailureLimitConfig,
    connection: RedisConnection | undefined,
    options: AuthFailureLimitOptions,
  ) {
    this.suspects = new RecentAddresses(options.maxSuspects ?? MAX_SUSPECTS);
    const rules = { keyPrefix: `${options.keyPrefix}auth-failures`, points: (settings ?? DEFAULT_LIMIT).perMinute, duration: WINDOW_SECONDS };
    this.insurance = new RateLimiterMemory(rules);
    if (connection === undefined) {
      this.limiter = this.insurance;
      return;
    }
    // The connection already fails commands at once while disconnected (no offline queue).
    const redis = new RateLimiterRedis({ ...rules, storeClient: connection, rejectIfRedisNotReady: true, insuranceLimiter: this.insurance });
    boundByReplyDeadline(redis, new ReplyDeadline(options.replySilenceMs, 10 * options.replySilenceMs, (message) => new Error(message)), options.onStoreError);
    this.limiter = redis;
  }

  /** A reload: new numbers apply to the next request; counts so far are kept. `null` turns it off. */
  configure(settings: FailureLimitConfig): void {
    this.settings = settings;
    if (settings === null) return;
    this.limiter.points = settings.perMinute;
    this.insurance.points = settings.perMinute;
  }

  /**
   * Runs `authenticate` for a request from `address` unless that address is blocked (throws the
   * 429 AuthFailure `throttled`, without calling it). A 401 it throws counts against the address.
   * Only an address that failed here lately is looked up before its key check: the requests of
   * clients with good keys cost no Redis command. An address blocked through failures on other
   * instances is refused here from its first failure on this one.
   */
  guard<T>(address: string, authenticate: () => Promise<T>): Promise<T> {
    const settings = this.settings;
    if (settings === null) return authenticate();
    const checked = this.suspects.has(address, Date.now()) ? this.refuseIfBlocked(address, settings.perMinute).then(authenticate) : authenticate();
    return checked.catch((err: unknown) => this.countFailure(address, settings, err));
  }

  private async countFailure(address: string, settings: NonNullable<FailureLimitConfig>, err: unknown): Promise<never> {
    if (err instanceof AuthFailure && err.status === 401) {
      this.suspects.add(address, Date.now() + (WINDOW_SECONDS + settings.blockSeconds) * 1000);
      await this.recordFailure(address, settings);
    }
    throw err;
  }

  private async refuseIfBlocked(address: string, perMinute: number): Promise<void> {
    // Store errors are answered by the insurance limiter; anything else lets the key check decide.
    const counted: RateLimiterRes | null = await this.limiter.get(address).catch(() => null);
    if (counted === null || counted.consumedPoints < perMinute || counted.msBeforeNext <= 0) return;
    const seconds = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    throw new AuthFailure(
      'throttled',
      `Too many failed authentication attempts from this address: limit ${perMinute} per minute, retry in ${formatGoDuration(seconds * 1000)}.`,
      { 'retry-after': String(seconds) },
    );
  }

  /**
   * `penalty`, not `consume`: a failure is always counted and never itself refused (a refused
   * `consume` still charges). The failure that reaches the limit blocks the address for
   * `blockSeconds` from now, not merely until its minute ends.
   */
  private async recordFailure(address: string, settings: NonNullable<FailureLimitConfig>): Promise<void> {
    try {
      const counted = await this.limiter.penalty(address);
      if (counted.consumedPoints >= settings.perMinute) await this.limiter.block(address, settings.blockSeconds);
    } catch {
      // Unreachable while the insurance limiter answers store errors; a 401 must stay a 401.
    }
  }
}

/** The calls RateLimiterStoreAbstract makes to its store (its extension points; not in the typings). */
interface StoreCalls {
  _upsert(...args: unknown[]): Promise<unknown>;
  _get(...args: unknown[]): Promise<unknown>;
  _delete(...args: unknown[]): Promise<unknown>;
}

/**
 * Makes every Redis call of `limiter` fail (so its insurance limiter answers) once Redis has been
 * silent for the reply deadline — a stalled Redis keeps its connection up, so the connection
 * alone would let a request wait indefinitely. While a call Redis went silent on is unanswered,
 * later calls fail at once rather than queue behind it: one request waits out a stall, not all.
 */
function boundByReplyDeadline(limiter: RateLimiterRedis, deadline: ReplyDeadline, onStoreError: () => void): void {
  const calls = limiter as unknown as StoreCalls;
  let stalled: Promise<unknown> | undefined;
  for (const name of ['_upsert', '_get', '_delete'] as const) {
    const call = calls[name].bind(limiter);
    calls[name] = async (...args) => {
      if (stalled !== undefined) {
        onStoreError();
        throw new Error('redis has not answered an earlier call');
      }
      let command: Promise<unknown>;
      try {
        command = call(...args);
      } catch (err) {
        command = Promise.reject(err);
      }
      try {
        return await deadline.watch(command);
      } catch (err) {
        onStoreError();
        // Settled already (refused, disconnected): cleared within a tick. Silent: when Redis answers.
        const pending = command.then(
          () => undefined,
          () => undefined,
        );
        stalled = pending;
        void pending.then(() => {
          if (stalled === pending) stalled = undefined;
        });
        throw err;
      }
    };
  }
}

/** Addresses with an expiry, oldest first (a Map keeps insertion order), bounded in number. */
class RecentAddresses {
  private readonly until = new Map<string, number>();

  constructor(private readonly max: number) {}

  has(address: string, now: number): boolean {
    const until = this.until.get(address);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(address);
    return false;
  }

  add(address: string, until: number): void {
    this.until.delete(address);
    this.until.set(address, until);
    if (this.until.size > this.max) this.until.delete(this.until.keys().next().value as string);
  }
}
