import type { SiblingChannel } from './core/change-feed.js';
import type { DatabaseSettings, DurableStore, StoreChangeListener } from './core/durable-store.js';
import { DatabaseUnavailableError } from './core/errors.js';
import type { StoreLogger } from './core/logger.js';
import { openDurableStore } from './open.js';

/** How often a store that could not be opened is tried again. */
const RETRY_OPEN_MS = 2000;

export interface StoreHandleOptions {
  readonly logger: StoreLogger;
  /** Called once the store is open (at start, or later when the database came back); open() waits for it. */
  readonly onOpen?: (store: DurableStore) => Promise<unknown>;
  /** The other workers on the same SQLite file (see ChangeFeed). */
  readonly sqliteSiblings?: SiblingChannel;
}

/**
 * The durable store as the gateway holds it: opened (and migrated) at start-up when the
 * database answers, else tried again in the background, so an instance starts and serves from
 * memory while the database is away. A database migrated by a newer Tollgate stops start-up.
 * Listeners of the change feed subscribe here once and are moved to the store when it opens.
 */
export class StoreHandle {
  private store: DurableStore | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners: StoreChangeListener[] = [];

  constructor(
    private readonly settings: DatabaseSettings,
    private readonly options: StoreHandleOptions,
  ) {}

  /** The open store, or undefined while the database has not been reached yet. */
  get current(): DurableStore | undefined {
    return this.store;
  }

  /** The open store, or DatabaseUnavailableError (admin writes answer 503 with it). */
  require(): DurableStore {
    if (!this.store) throw new DatabaseUnavailableError('the database has not been reached since start-up');
    return this.store;
  }

  /**
   * Opens the store. Resolves true once open; false when the database cannot be reached (it is
   * then retried in the background). Rejects for anything else (SchemaTooNewError): fatal.
   */
  async open(): Promise<boolean> {
    try {
      await this.opened(await openDurableStore(this.settings, { logger: this.options.logger, sqliteSiblings: this.options.sqliteSiblings }));
      return true;
    } catch (err) {
      if (!(err instanceof DatabaseUnavailableError)) throw err;
      this.options.logger.warn({ err: err.message }, 'the database cannot be reached: serving from memory, trying again every 2 s');
      this.scheduleRetry();
      return false;
    }
  }

  onChange(listener: StoreChangeListener): void {
    this.listeners.push(listener);
    this.store?.onChange(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.store?.close();
  }

  private async opened(store: DurableStore): Promise<void> {
    if (this.closed) {
      await store.close();
      return;
    }
    this.store = store;
    for (const listener of this.listeners) store.onChange(listener);
    await this.options.onOpen?.(store);
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      openDurableStore(this.settings, { logger: this.options.logger, sqliteSiblings: this.options.sqliteSiblings }).then(
        (store) => void this.opened(store),
        (err: unknown) => {
          if (err instanceof DatabaseUnavailableError) this.scheduleRetry();
          else this.options.logger.warn({ err: (err as Error).message }, 'the database cannot be used; not trying again');
        },
      );
    }, RETRY_OPEN_MS);
    this.retryTimer.unref();
  }
}
