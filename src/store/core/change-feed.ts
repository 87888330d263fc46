import { randomUUID } from 'node:crypto';
import type { StoreChange, StoreChangeListener } from './durable-store.js';
import type { StoreLogger } from './logger.js';

/** What travels in a NOTIFY payload: the change, and which store instance made it. */
interface ChangeMessage {
  origin: string;
  change: StoreChange;
}

const KINDS = new Set(['key', 'resource', 'team', 'admin_key', 'resync']);

function isStoreChange(value: unknown): value is StoreChange {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, id } = value as { kind?: unknown; id?: unknown };
  return typeof kind === 'string' && KINDS.has(kind) && (kind === 'resync' || typeof id === 'string');
}

/** Carries encoded changes between processes that share one database file (see ChangeFeed). */
export interface SiblingChannel {
  send(payload: string): void;
  subscribe(listener: (payload: string) => void): void;
}

/**
 * The listeners of one store instance. A local write reaches them directly once it has
 * committed; a write by another instance arrives as a NOTIFY payload, and this instance's own
 * payloads (the NOTIFY echo) are skipped, so each listener hears each write exactly once.
 */
export class ChangeFeed {
  /** Tells this instance's NOTIFY echoes apart from other instances' notifications. */
  private readonly origin = randomUUID();
  private readonly listeners = new Set<StoreChangeListener>();

  /**
   * `siblings`: processes sharing this database without a NOTIFY of their own (workers on one
   * SQLite file), told of each committed local change as an encoded payload they `receive()`.
   */
  constructor(
    private readonly logger: StoreLogger,
    private readonly siblings?: SiblingChannel,
  ) {
    siblings?.subscribe((payload) => this.receive(payload));
  }

  /** A local write committed: its listeners here hear it now, sibling processes through their channel. */
  committed(change: StoreChange): void {
    this.emit(change);
    this.siblings?.send(this.encode(change));
  }

  subscribe(listener: StoreChangeListener): () => void {
    // A wrapper per subscription: the same function subscribed twice is called twice, and each unsubscribe removes one.
    const entry: StoreChangeListener = (change) => listener(change);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Calls every listener; one that throws is logged and does not keep the others from hearing. */
  emit(change: StoreChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.logger.warn({ err: error instanceof Error ? error.message : String(error), change }, 'store change listener threw');
      }
    }
  }

  /** The NOTIFY payload for a local change. */
  encode(change: StoreChange): string {
    const message: ChangeMessage = { origin: this.origin, change };
    return JSON.stringify(message);
  }

  /** Emits a change another instance announced; ignores this instance's echo and anything malformed. */
  receive(payload: string): void {
    let message: Partial<ChangeMessage>;
    try {
      message = JSON.parse(payload) as Partial<ChangeMessage>;
    } catch {
      this.logger.warn({ payload: payload.slice(0, 200) }, 'ignored a store change notification that is not JSON');
      return;
    }
    if (message.origin === this.origin) return;
    if (!isStoreChange(message.change)) {
      this.logger.warn({ payload: payload.slice(0, 200) }, 'ignored a malformed store change notification');
      return;
    }
    this.emit(message.change);
  }
}
