import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Why a client connection was closed by the gateway rather than by its client or a timeout of Node's. */
export const EVICTION_REASONS = ['cap_idle', 'cap_headers', 'pressure_idle', 'pressure_headers'] as const;
export type EvictionReason = (typeof EVICTION_REASONS)[number];

/** What a registry can be asked at any time (read at scrape time by metrics). */
export interface ConnectionCounts {
  /** Client connections open now. */
  readonly open: number;
  /** The effective cap. */
  readonly maxConnections: number;
}

/** What the registry reports (metrics); never called per request. */
export interface ConnectionEvents {
  /** Called once, when the registry starts. */
  watch(counts: ConnectionCounts): void;
  evicted(reason: EvictionReason): void;
  /** A new connection closed at once: the cap was reached and every open connection was busy. */
  refused(): void;
}

export interface ConnectionPolicy {
  /** The most client connections held open (the effective `server.maxConnections`). */
  readonly maxConnections: number;
  /** Under pressure, a connection that has not completed a request within this is closed. */
  readonly pressureHeadersTimeoutMs: number;
}

/** Share of the cap from which the gateway is under pressure (SPEC 15). */
export const PRESSURE_SHARE = 0.8;

/** What one open client connection is doing; busy ones are on no list and never closed here. */
interface Entry {
  readonly socket: Socket;
  readonly registry: ConnectionRegistry;
  /** Requests whose response has not closed yet (more than one when the client pipelines); GONE once counted out. */
  inFlight: number;
  /** When it started waiting: accepted, or its last response closed (performance.now()). */
  since: number;
  list: EntryList | null;
  prev: Entry | null;
  next: Entry | null;
}

/** Waiting connections in the order they started waiting: the head has waited longest. */
class EntryList {
  head: Entry | null = null;
  tail: Entry | null = null;

  append(entry: Entry): void {
    entry.list = this;
    entry.prev = this.tail;
    entry.next = null;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
  }

  static unlink(entry: Entry): void {
    const list = entry.list;
    if (!list) return;
    if (entry.prev) entry.prev.next = entry.next;
    else list.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else list.tail = entry.prev;
    entry.list = entry.prev = entry.next = null;
  }
}

const kEntry = Symbol('tollgate.connection');
const GONE = -1;
type TrackedSocket = Socket & { [kEntry]?: Entry };

/**
 * Tracks a server's client connections and sheds the cheapest ones under pressure (SPEC 15):
 * once open connections reach PRESSURE_SHARE of the cap, the ones waiting then are closed when
 * they have waited `pressureHeadersTimeoutMs` — idle keep-alive ones first, then ones that
 * never completed a request; at the cap, a new connection takes the place of the one that
 * has waited longest (again keep-alive first) instead of being refused. A connection with a request in progress
 * (a slow upload, a long stream) is never closed here. Per request this costs a list unlink,
 * a counter and one 'close' listener; time is only read when a response closes.
 */
export class ConnectionRegistry implements ConnectionCounts {
  /** Served at least one request, none in progress now. */
  private readonly idle = new EntryList();
  /** Accepted, no request yet (headers pending, or nothing sent at all). */
  private readonly pending = new EntryList();
  private count = 0;
  private readonly pressureAt: number;
  /** When open connections last reached pressureAt (performance.now()); -Infinity: never. */
  private pressureSeenAt = Number.NEGATIVE_INFINITY;
  private readonly sweepIntervalMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    server: Server,
    private readonly policy: ConnectionPolicy,
    private readonly events: ConnectionEvents,
  ) {
    this.pressureAt = Math.ceil(policy.maxConnections * PRESSURE_SHARE);
    server.on('connection', (socket: Socket) => this.accepted(socket));
    // Before the gateway's own listener, which may answer (and close the response) at once.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.requestStarted(req, res));
    // One coarse timer for all connections, not one per socket.
    this.sweepIntervalMs = Math.max(50, Math.min(500, Math.floor(policy.pressureHeadersTimeoutMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs);
    this.sweeper.unref();
    server.once('close', () => clearInterval(this.sweeper));
    events.watch(this);
  }

  /** Client connections open now. */
  get open(): number {
    return this.count;
  }

  get maxConnections(): number {
    return this.policy.maxConnections;
  }

  private accepted(socket: TrackedSocket): void {
    if (this.count >= this.policy.maxConnections && !this.evictLongestWaiting()) {
      this.events.refused();
      socket.destroy();
      return;
    }
    const now = performance.now();
    const entry: Entry = { socket, registry: this, inFlight: 0, since: now, list: null, prev: null, next: null };
    socket[kEntry] = entry;
    this.pending.append(entry);
    this.count++;
    if (this.count >= this.pressureAt) this.pressureSeenAt = now;
    socket.once('close', () => this.forget(entry));
  }

  private requestStarted(req: IncomingMessage, res: ServerResponse): void {
    const entry = (req.socket as TrackedSocket)[kEntry];
    if (!entry) return;
    entry.inFlight++;
    EntryList.unlink(entry);
    res.on('close', onResponseClose);
  }

  /** A response closed (called by onResponseClose): its connection waits for the next request, unless it is closing (`Connection: close`). */
  responseClosed(entry: Entry): void {
    if (entry.inFlight === GONE || --entry.inFlight > 0 || !entry.socket.writable) return;
    entry.since = performance.now();
    this.idle.append(entry);
  }

  private forget(entry: Entry): void {
    if (entry.inFlight === GONE) return;
    EntryList.unlink(entry);
    entry.inFlight = GONE;
    this.count--;
  }

  /** Closes the connection that has waited longest, keep-alive before pending; false when all are busy. */
  private evictLongestWaiting(): boolean {
    const victim = this.idle.head ?? this.pending.head;
    if (!victim) return false;
    this.evict(victim, victim.list === this.idle ? 'cap_idle' : 'cap_headers');
    return true;
  }

  private evict(entry: Entry, reason: EvictionReason): void {
    // Counted out now: its 'close' comes later, and the slot is wanted now.
    this.forget(entry);
    entry.socket.destroy();
    this.events.evicted(reason);
  }

  /**
   * Closes the connections that were waiting when pressure was last seen and have waited the
   * pressure timeout since, keep-alive first. Shedding the oldest takes the count back under
   * the mark before younger ones expire: what was waiting under pressure is closed all the
   * same (the window lasts one timeout, and one sweep more for the timer's coarseness).
   */
  private sweep(): void {
    const now = performance.now();
    const timeout = this.policy.pressureHeadersTimeoutMs;
    if (now - this.pressureSeenAt > timeout + this.sweepIntervalMs) return;
    const cutoff = Math.min(now - timeout, this.pressureSeenAt);
    while (this.idle.head && this.idle.head.since <= cutoff) this.evict(this.idle.head, 'pressure_idle');
    while (this.pending.head && this.pending.head.since <= cutoff) this.evict(this.pending.head, 'pressure_headers');
  }
}

/** Shared by every response (no closure per request): `this` is the response. */
function onResponseClose(this: ServerResponse): void {
  const entry = (this.req.socket as TrackedSocket | null)?.[kEntry];
  if (entry) entry.registry.responseClosed(entry);
}
