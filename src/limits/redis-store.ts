import { randomUUID } from 'node:crypto';
import { defineKeyedScript, fullyConnected, ReplyDeadline, whenConnected, type RedisConnection } from '../redis/index.js';
import { limitIndex } from '../limit-kinds/index.js';
import { decodeScopeNumbers, LIMITS_SCRIPT } from './redis-scripts.js';
import { hashTag, packDoubles, type PendingScope, type ScriptCall } from './redis-call.js';
import { isInflight, StoreUnavailableError, type Check, type LimitStore, type Outcome, type ScopeReading, type SpendWatch } from './store.js';

/** The script, once defined on the connection (ioredis runs EVALSHA and reloads on NOSCRIPT). */
interface ScriptCommands {
  /** The reply as a Buffer (ioredis' `…Buffer` variant of a defined command): packed doubles. */
  tollgateLimitsBuffer(numKeys: number, ...keysThenArgs: Array<string | number | Buffer>): Promise<Buffer>;
}

export interface RedisStoreOptions {
  /** Silence after which Redis counts as down (`redis.commandTimeoutMs`); see ReplyDeadline. */
  readonly replySilenceMs: number;
  /** How long an in-flight lease survives without renewal: the delay before a dead instance's slots return. */
  readonly leaseTtlMs: number;
  /** Called when a background write (settles, lease renewal, undo) fails. */
  readonly onBackgroundError: () => void;
}


/**
 * Counters and in-flight leases in Redis (single node or Cluster), shared by every gateway
 * instance: one script call per admission, which also carries what earlier requests to the
 * same scopes left to settle (see redis-scripts.ts for the layout). Settles no admission took
 * go out at the end of the event-loop turn, one script per team. The connection comes from
 * the redis module; the store owns it from then on (close() disconnects it).
 */
export class RedisStore implements LimitStore {
  readonly name = 'redis';
  private readonly scripts: ScriptCommands;
  private readonly deadline: ReplyDeadline;
  private readonly instance = randomUUID().slice(0, 8);
  private leaseSeq = 0;
  /** Scope key → leases this instance holds there, renewed until released. */
  private readonly held = new Map<string, Set<string>>();
  /** Scope key → what waits for the next admission to that scope, or for the flush. */
  private readonly pending = new Map<string, PendingScope>();
  private flushScheduled = false;
  private readonly renewTimer: NodeJS.Timeout;
  /** Background writes in progress (flushes, renewals, undos): settled() waits for them. */
  private readonly writing = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisStoreOptions,
  ) {
    // A queue that keeps moving may take longer than the silence limit, but never 10 times as long.
    this.deadline = new ReplyDeadline(options.replySilenceMs, 10 * options.replySilenceMs, (message) => new StoreUnavailableError(message));
    defineKeyedScript(this.connection, 'tollgateLimits', LIMITS_SCRIPT);
    this.scripts = this.connection as unknown as ScriptCommands;
    // Renew three times per TTL, so one late or failed round never lets a live lease lapse.
    this.renewTimer = setInterval(() => this.renewLeases(), Math.max(10, Math.floor(options.leaseTtlMs / 3)));
    this.renewTimer.unref();
    // A Redis that restarted empty learns this instance's leases again, and gets the settles that waited.
    this.connection.on('ready', () => this.renewLeases());
  }

  /** Every connection is up, for a Cluster the one to each master too. */
  ready(): boolean {
    return fullyConnected(this.connection);
  }

  whenReady(timeoutMs: number): Promise<boolean> {
    return whenConnected(this.connection, timeoutMs);
  }

  /** Cheap check for every call: the client (or Cluster) can take commands. */
  private connected(): boolean {
    return this.connection.status === 'ready';
  }

  async acquire(checks: readonly Check[]): Promise<Outcome> {
    if (!this.connected()) throw new StoreUnavailableError(`redis is ${this.connection.status}`);
    const keys: string[] = [];
    let slot: string | undefined;
    const call = this.takePending(keys);
    for (const check of checks) {
      let k = keys.indexOf(check.key);
      if (k < 0) {
        k = keys.push(check.key) - 1;
        this.takePendingOf(check.key, k, call);
      }
      const inflight = isInflight(check);
      if (inflight) slot ??= `L:${this.instance}:${++this.leaseSeq}`;
      // Cost -1: a limit that does not apply to this request, read for the headers only (see the script).
      // A soft budget is charged and never refuses: a max nothing reaches.
      call.checks.push(k + 1, limitIndex(check.limit), check.soft ? Number.MAX_VALUE : check.max, check.reportOnly ? -1 : check.cost, inflight ? 0 : check.windowMs);
    }
    call.lease = slot ?? '';
    const command = this.send(keys, call);
    let reply: Buffer;
    try {
      reply = await this.deadline.watch(command);
    } catch (err) {
      this.undoIfLateAdmitted(command, checks, slot);
      throw err;
    }
    const admitted = reply.readDoubleLE(0) === 1;
    const now = reply.readDoubleLE(8);
    const count = checks.length;
    const used = new Array<number>(count);
    const resetMs = new Array<number>(count);
    const windowEnds = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      used[i] = reply.readDoubleLE(16 + 16 * i);
      windowEnds[i] = reply.readDoubleLE(24 + 16 * i);
      resetMs[i] = windowEnds[i] === 0 ? 0 : windowEnds[i]! - now;
    }
    if (admitted && slot) this.hold(checks, slot);
    return { admitted, used, resetMs, windowEnds, slot: admitted ? slot : undefined };
  }

  /**
   * Queues the settle for the end of this turn of the event loop: an admission to the same
   * scope made before then carries it (no call of its own), and the rest go out together, one
   * script per team — before the client can send its next request, so a freed slot is free on
   * every instance by then.
   */
  settle(checks: readonly Check[], deltas: readonly number[], windowEnds: readonly number[], slot: string | undefined, watch?: SpendWatch): void {
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (isInflight(check)) {
        if (slot && this.held.get(check.key)?.delete(slot)) this.pendingFor(check.key).released.push(slot);
        continue;
      }
      const delta = deltas[i]!;
      if (delta === 0) continue;
      const scope = this.pendingFor(check.key);
      const id = `${check.limit} ${windowEnds[i]!}`;
      const entry = scope.deltas.get(id);
      if (entry) entry.delta += delta;
      else scope.deltas.set(id, { kind: limitIndex(check.limit), end: windowEnds[i]!, delta, check, watch: check.alerts && watch });
    }
    this.scheduleFlush();
  }

  /** One HGET of the scope's packed numbers (admin reads, not the request path); windows that ended read as absent. */
  async read(key: string): Promise<ScopeReading> {
    if (!this.connected()) throw new StoreUnavailableError(`redis is ${this.connection.status}`);
    const blob = await this.deadline.watch(this.connection.hgetBuffer(key, 'c'));
    if (blob === null) return { inflight: 0, counters: {} };
    const numbers = decodeScopeNumbers(blob);
    const now = Date.now();
    const counters: Record<string, { used: number; end: number }> = {};
    for (const [name, counter] of Object.entries(numbers.counters)) if (counter.end > now) counters[name] = counter;
    return { inflight: numbers.inflight, counters: counters as ScopeReading['counters'] };
  }

  /** Sends every waiting settle now, and resolves once it and the store's other background writes have reached Redis. */
  async settled(): Promise<void> {
    this.flush(false);
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    // Leases still held are left to lapse: after close nothing would renew them anyway.
    this.connection.disconnect();
  }

  private send(keys: readonly string[], call: ScriptCall): Promise<Buffer> {
    const { leaseTtlMs } = this.options;
    const command = this.scripts.tollgateLimitsBuffer(keys.length, ...keys, leaseTtlMs, call.lease, packDoubles(call.checks), packDoubles(call.settles), call.released, call.renewed);
    // A settle ran whenever its reply comes, even after the deadline: its alerts are heard then.
    if (call.watched.length > 0) command.then((reply) => this.hearSettles(reply, call), () => undefined);
    return command;
  }

  /** Reports where each watched settle left its counter (after the checks' numbers in the reply). */
  private hearSettles(reply: Buffer, call: ScriptCall): void {
    const base = 16 + 16 * (call.checks.length / 5);
    for (const { n, delta, check, watch } of call.watched) {
      const after = reply.readDoubleLE(base + 16 * n);
      const end = reply.readDoubleLE(base + 16 * n + 8);
      if (end > 0) watch(check, after - delta, after, end);
    }
  }

  private hold(checks: readonly Check[], slot: string): void {
    for (const check of checks) {
      if (!isInflight(check) || check.cost === 0) continue;
      let leases = this.held.get(check.key);
      if (!leases) {
        leases = new Set();
        this.held.set(check.key, leases);
      }
      leases.add(slot);
    }
  }

  private pendingFor(key: string): PendingScope {
    let scope = this.pending.get(key);
    if (!scope) {
      scope = { deltas: new Map(), released: [] };
      this.pending.set(key, scope);
    }
    return scope;
  }

  /** A script call carrying what waits for `keys`. */
  private takePending(keys: readonly string[]): ScriptCall {
    const call: ScriptCall = { lease: '', checks: [], settles: [], released: '', renewed: '', watched: [] };
    for (let k = 0; k < keys.length; k++) this.takePendingOf(keys[k]!, k, call);
    return call;
  }

  /** Moves what waits for `key` (the call's key number k + 1) into `call`. */
  private takePendingOf(key: string, k: number, call: ScriptCall): void {
    const scope = this.pending.get(key);
    if (!scope) return;
    this.pending.delete(key);
    for (const { kind, end, delta, check, watch } of scope.deltas.values()) {
      if (watch !== undefined && delta > 0) call.watched.push({ n: call.settles.length / 4, delta, check, watch });
      call.settles.push(k + 1, kind, delta, end);
    }
    for (const lease of scope.released) call.released += `${k + 1} ${lease} `;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush(false);
    });
  }

  /**
   * Sends what waits (and with `renew`, every held lease), one script per team: a Cluster
   * slot. Nothing is sent while Redis is away: it goes when the connection is back ('ready'),
   * and the script then drops refunds whose window has ended.
   */
  private flush(renew: boolean): void {
    if (!this.connected() || this.closed) return;
    const byTag = new Map<string, string[]>();
    const add = (key: string): void => {
      const tag = hashTag(key);
      const keys = byTag.get(tag);
      if (!keys) byTag.set(tag, [key]);
      else if (!keys.includes(key)) keys.push(key);
    };
    for (const key of this.pending.keys()) add(key);
    if (renew) for (const [key, leases] of this.held) if (leases.size > 0) add(key);
    for (const keys of byTag.values()) this.write(keys, renew);
  }

  private write(keys: readonly string[], renew: boolean): void {
    const call = this.takePending(keys);
    if (renew) {
      keys.forEach((key, k) => {
        for (const lease of this.held.get(key) ?? []) call.renewed += `${k + 1} ${lease} `;
      });
    }
    const write = this.deadline.watch(this.send(keys, call)).catch(() => {
      // Lost or late: releases and deltas may have run. Leases not released lapse by their TTL.
      this.options.onBackgroundError();
    });
    this.track(write);
  }

  /**
   * An admission given up at the reply deadline may still have run: Redis was only slow, and
   * the script waiting in its queue charges when it runs. The gateway answered without it
   * (503, or the fallback in `open` mode), so whatever it charged is given back when its reply
   * comes — else its lease would hold a slot no request uses until it lapses, and its counters
   * would count a request Redis never served.
   */
  private undoIfLateAdmitted(command: Promise<Buffer>, checks: readonly Check[], slot: string | undefined): void {
    const undo = command.then(
      (reply) => {
        if (reply.readDoubleLE(0) !== 1) return;
        const refunds = checks.map((check) => (isInflight(check) ? 0 : -check.cost));
        const windowEnds = checks.map((_, i) => reply.readDoubleLE(24 + 16 * i));
        if (slot) this.hold(checks, slot);
        this.settle(checks, refunds, windowEnds, slot);
        this.flush(false);
      },
      // No reply at all: the connection was lost. A lease it may have taken lapses by its TTL.
      () => undefined,
    );
    this.track(undo);
  }

  private track(write: Promise<unknown>): void {
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  private renewLeases(): void {
    for (const [key, leases] of this.held) if (leases.size === 0) this.held.delete(key);
    this.flush(true);
  }
}
