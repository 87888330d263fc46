import http from 'node:http';
import https from 'node:https';
import type { UpstreamConfig } from '../../config/index.js';

/** The per-request options http-proxy-3 takes for one target, built once per target. */
export interface TargetOptions {
  readonly target: URL;
  readonly agent: http.Agent;
  readonly prependPath: boolean;
  buffer: undefined;
}

/** What a pool tells the outside about its targets (metrics, /readyz). */
export interface PoolEvents {
  /** A target joined (start-up or reload). */
  targetAdded(upstream: string, target: string): void;
  ejected(upstream: string, target: string): void;
}

/** One host of an upstream: its keep-alive agent, its load and its ejection state (SPEC 19). */
export class PoolTarget {
  /** `host:port`, the `target` label. */
  readonly key: string;
  readonly options: TargetOptions;
  /** Requests sent here whose answer has not ended (least-outstanding). */
  outstanding = 0;
  /** Smooth weighted round-robin's running weight. */
  current = 0;
  /** Failures in a row (connect, reset, timeout, 502/503/504). */
  failures = 0;
  /** Ejections in a row: the back-off doubles with each. */
  ejections = 0;
  /** Out until this time (ms since epoch; 0: in). */
  outUntil = 0;
  /** When the current ejection began: panic mode tries the one out longest. */
  outSince = 0;
  /** Taken out by the active health check until a check passes (SPEC 19 healthCheck). */
  checkedOut = false;

  constructor(
    readonly url: URL,
    readonly weight: number,
    maxSockets: number,
  ) {
    this.key = url.host.includes(':') ? url.host : `${url.hostname}:${url.protocol === 'https:' ? 443 : 80}`;
    const agentOptions = { keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 64), scheduling: 'lifo' as const };
    const agent = url.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    // A bare origin has no path to prepend; saying so spares a `new URL` of the target per request.
    this.options = { target: url, agent, prependPath: url.pathname !== '/' || url.search !== '', buffer: undefined };
  }

  isUp(now: number): boolean {
    return this.outUntil <= now && !this.checkedOut;
  }

  /** `up`, `ejected` (with the time left) for /readyz. */
  state(now: number): { target: string; state: 'up' | 'ejected'; outstanding: number; retryInMs?: number } {
    return this.isUp(now)
      ? { target: this.key, state: 'up', outstanding: this.outstanding }
      : this.outUntil > now
        ? { target: this.key, state: 'ejected', outstanding: this.outstanding, retryInMs: this.outUntil - now }
        : { target: this.key, state: 'ejected', outstanding: this.outstanding };
  }
}

/** The hosts of one upstream config: `targets`, or the single `url` as one target of weight 1. */
export function poolTargets(config: UpstreamConfig): PoolTarget[] {
  const listed = config.targets ?? [{ url: config.url!, weight: 1 }];
  return listed.map(({ url, weight }) => new PoolTarget(new URL(url), weight, config.maxSockets));
}
