import { fullyConnected, ReplyDeadline, whenConnected, type RedisConnection } from '../redis/index.js';
import { limitKind } from './kinds.js';
import { ADMIT, RENEW_LEASES, SETTLE } from './redis-scripts.js';
import { StoreUnavailableError, type Check, type LimitStore, type Outcome } from './store.js';

type ScriptArg = string | number;

/** The scripts, once defined on the connection (ioredis runs EVALSHA and reloads on NOSCRIPT). */
interface ScriptCommands {
  tollgateAdmit(numKeys: number, ...keysThenArgs: ScriptArg[]): Promise<number[]>;
  tollgateSettle(numKeys: number, ...keysThenArgs: ScriptArg[]): Promise<number>;
  tollgateRenewLeases(numKeys: number, ...keysThenArgs: ScriptArg[]): Promise<number>;
}

export interface RedisStoreOptions {
  /** Silence after which Redis counts as down (`redis.commandTimeoutMs`); see ReplyDeadline. */
  readonly replySilenceMs: number;
  /** How long an in-flight slot survives without renewal: the delay before a dead instance's slots return. */
  readonly leaseTtlMs: number;
  /** Called when a background lease renewal fails (admissions and settles report their own). */
  readonly onBackgroundError: () => void;
}

const isInflight = (check: Check): boolean => limitKind(check.limit).window.type === 'inflight';

/**
 * Counters and leases in Redis (single node or Cluster), shared by every gateway instance.
 * One script call per admission and one per settle. The connection comes from the redis
 * module; the store owns it from then on (close() disconnects it).
 */
export class RedisStore implements LimitStore {
  readonly name = 'redis';
  private readonly scripts: ScriptCommands;
  /** Lease set key → lease ids this instance holds there, renewed until settled. */
  private readonly leases = new Map<string, Set<string>>();
  private readonly renewTimer: NodeJS.Timeout;
  private readonly deadline: ReplyDeadline;
  /** Undos of admissions that answered after their deadline, until they reach Redis. */
  private readonly undoing = new Set<Promise<unknown>>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisStoreOptions,
  ) {
    // A queue that keeps moving may take longer than the silence limit, but never 10 times as long.
    this.deadline = new ReplyDeadline(options.replySilenceMs, 10 * options.replySilenceMs, (message) => new StoreUnavailableError(message));
    this.connection.defineCommand('tollgateAdmit', { lua: ADMIT });
    this.connection.defineCommand('tollgateSettle', { lua: SETTLE });
    this.connection.defineCommand('tollgateRenewLeases', { lua: RENEW_LEASES });
    this.scripts = this.connection as unknown as ScriptCommands;
    // Renew three times per TTL, so one late or failed round never lets a live slot lapse.
    this.renewTimer = setInterval(() => this.renewLeases(), Math.max(10, Math.floor(options.leaseTtlMs / 3)));
    this.renewTimer.unref();
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

  async acquire(checks: readonly Check[], leaseId: string): Promise<Outcome> {
    if (!this.connected()) throw new StoreUnavailableError(`redis is ${this.connection.status}`);
    const args: ScriptArg[] = [checks.length];
    let spec = '';
    for (const check of checks) {
      args.push(check.key);
      // The script's protocol marks a lease set by a window of 0.
      spec += `${check.max} ${check.cost} ${isInflight(check) ? 0 : check.windowMs} `;
    }
    args.push(leaseId, this.options.leaseTtlMs, spec);
    const command = this.scripts.tollgateAdmit(...(args as [number, ...ScriptArg[]]));
    let reply: number[];
    try {
      reply = await this.deadline.watch(command);
    } catch (err) {
      this.undoIfLateAdmitted(command, checks, leaseId);
      throw err;
    }
    const used = new Array<number>(checks.length);
    const resetMs = new Array<number>(checks.length);
    for (let i = 0; i < checks.length; i++) {
      used[i] = reply[1 + 2 * i]!;
      resetMs[i] = reply[2 + 2 * i]!;
    }
    const admitted = reply[0] === 1;
    if (admitted) this.holdLeases(checks, leaseId);
    return { admitted, used, resetMs };
  }

  async settle(checks: readonly Check[], deltas: readonly number[], leftMs: readonly number[], leaseId: string): Promise<void> {
    const counterKeys: string[] = [];
    let counterSpec = '';
    const leaseKeys: string[] = [];
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (isInflight(check)) {
        leaseKeys.push(check.key);
        this.leases.get(check.key)?.delete(leaseId);
      } else if (deltas[i] !== 0) {
        counterKeys.push(check.key);
        counterSpec += `${deltas[i]!} ${Math.max(1, Math.round(leftMs[i]!))} `;
      }
    }
    if (counterKeys.length + leaseKeys.length === 0) return;
    if (!this.connected()) throw new StoreUnavailableError(`redis is ${this.connection.status}`);
    const keys = counterKeys.concat(leaseKeys);
    await this.deadline.watch(this.scripts.tollgateSettle(keys.length, ...keys, leaseId, counterKeys.length, counterSpec));
  }

  async close(): Promise<void> {
    clearInterval(this.renewTimer);
    this.leases.clear();
    // Leases still held are left to expire: after close nothing would renew them anyway.
    this.connection.disconnect();
  }

  /**
   * An admission given up at the reply deadline may still have run: Redis was only slow, and
   * the script waiting in its queue charges when it runs. The gateway answered without it
   * (503, or the fallback in `open` mode), so whatever it charged is given back when its reply
   * comes — else its leases would hold in-flight slots no request uses until they expire, and
   * its counters would count requests Redis never served.
   */
  private undoIfLateAdmitted(command: Promise<number[]>, checks: readonly Check[], leaseId: string): void {
    const undo = command.then(
      (reply) => {
        if (reply[0] !== 1) return;
        const refunds = checks.map((check) => (isInflight(check) ? 0 : -check.cost));
        const leftMs = checks.map((_, i) => reply[2 + 2 * i] ?? 0);
        return this.settle(checks, refunds, leftMs, leaseId).catch(this.options.onBackgroundError);
      },
      // No reply at all: the connection was lost. A lease it may have taken expires by its TTL.
      () => undefined,
    );
    this.undoing.add(undo);
    void undo.finally(() => this.undoing.delete(undo));
  }

  /** Resolves when every undo of a late admission so far has reached Redis (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.undoing.size > 0) await Promise.allSettled([...this.undoing]);
  }

  private holdLeases(checks: readonly Check[], leaseId: string): void {
    for (const check of checks) {
      if (!isInflight(check)) continue;
      let held = this.leases.get(check.key);
      if (!held) {
        held = new Set();
        this.leases.set(check.key, held);
      }
      held.add(leaseId);
    }
  }

  private renewLeases(): void {
    if (!this.connected()) return;
    for (const [key, held] of this.leases) {
      if (held.size === 0) {
        this.leases.delete(key);
        continue;
      }
      this.deadline.watch(this.scripts.tollgateRenewLeases(1, key, this.options.leaseTtlMs, ...held)).catch(this.options.onBackgroundError);
    }
  }
}
