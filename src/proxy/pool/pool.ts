import type { UpstreamConfig } from '../../config/index.js';
import { poolTargets, type PoolEvents, type PoolTarget } from './targets.js';

export type Balance = UpstreamConfig['balance'];

/**
 * The targets of one upstream and the choice among them (SPEC 19): weighted least-outstanding or
 * smooth weighted round-robin over the targets that are in; with every candidate out, the one
 * out longest (panic mode). A single target is always the answer, in O(1).
 */
export class TargetPool {
  readonly targets: readonly PoolTarget[];
  /** More than one target: only then are load, retries and forwarded headers tracked. */
  readonly several: boolean;
  private readonly balance: Balance;
  private readonly eject: UpstreamConfig['eject'];
  /** Where least-outstanding starts its scan, so ties rotate instead of piling on the first. */
  private start = 0;

  constructor(
    readonly upstream: string,
    config: UpstreamConfig,
    private readonly events: PoolEvents | undefined,
  ) {
    this.targets = poolTargets(config);
    this.several = this.targets.length > 1;
    this.balance = config.balance;
    this.eject = config.eject;
    for (const target of this.targets) events?.targetAdded(upstream, target.key);
  }

  /** The target for the next attempt, skipping `tried`; undefined when every target was tried. */
  pick(now: number, tried?: readonly PoolTarget[]): PoolTarget | undefined {
    if (!this.several) return tried === undefined ? this.targets[0] : undefined;
    const chosen = this.balance === 'round-robin' ? this.roundRobin(now, tried) : this.leastOutstanding(now, tried);
    return chosen ?? this.outLongest(tried);
  }

  private leastOutstanding(now: number, tried: readonly PoolTarget[] | undefined): PoolTarget | undefined {
    const { targets } = this;
    const n = targets.length;
    this.start = (this.start + 1) % n;
    let best: PoolTarget | undefined;
    let bestScore = Infinity;
    for (let i = 0; i < n; i += 1) {
      const target = targets[(this.start + i) % n]!;
      if (!target.isUp(now) || tried?.includes(target)) continue;
      const score = (target.outstanding + 1) / target.weight;
      if (score < bestScore) {
        best = target;
        bestScore = score;
      }
    }
    return best;
  }

  private roundRobin(now: number, tried: readonly PoolTarget[] | undefined): PoolTarget | undefined {
    let best: PoolTarget | undefined;
    let total = 0;
    for (const target of this.targets) {
      if (!target.isUp(now) || tried?.includes(target)) continue;
      target.current += target.weight;
      total += target.weight;
      if (best === undefined || target.current > best.current) best = target;
    }
    if (best) best.current -= total;
    return best;
  }

  /** Panic mode: every candidate is out, so the one out longest is tried rather than refusing. */
  private outLongest(tried: readonly PoolTarget[] | undefined): PoolTarget | undefined {
    let best: PoolTarget | undefined;
    for (const target of this.targets) {
      if (tried?.includes(target)) continue;
      if (best === undefined || target.outSince < best.outSince) best = target;
    }
    return best;
  }

  /** An answer that was not 502/503/504: the target is healthy again. */
  succeeded(target: PoolTarget): void {
    if (target.failures === 0 && target.outUntil === 0) return;
    target.failures = 0;
    target.ejections = 0;
    target.outUntil = 0;
    target.outSince = 0;
  }

  /** A connect error, reset, timeout or 502/503/504: enough in a row take the target out, the back-off doubling. */
  failed(target: PoolTarget, now: number): void {
    target.failures += 1;
    if (target.failures < this.eject.failures) return;
    target.ejections += 1;
    const backoff = Math.min(this.eject.baseMs * 2 ** Math.min(target.ejections - 1, 30), this.eject.maxMs);
    target.outSince = now;
    target.outUntil = now + backoff;
    this.events?.ejected(this.upstream, target.key);
  }

  /** The active health check failed: out until a check passes (counted as an ejection once). */
  checkFailed(target: PoolTarget, now: number): void {
    if (target.checkedOut) return;
    target.checkedOut = true;
    if (target.outSince === 0) target.outSince = now;
    this.events?.ejected(this.upstream, target.key);
  }

  /** The active health check passed: back in, unless passive ejection still holds it out. */
  checkPassed(target: PoolTarget): void {
    if (!target.checkedOut) return;
    target.checkedOut = false;
    if (target.outUntil === 0) target.outSince = 0;
  }

  states(now: number): ReturnType<PoolTarget['state']>[] {
    return this.targets.map((target) => target.state(now));
  }

  close(): void {
    for (const target of this.targets) target.options.agent.destroy();
  }
}
