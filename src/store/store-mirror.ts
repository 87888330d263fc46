import type { DurableStore, StoreChange } from './core/durable-store.js';
import type { StoreHandle } from './handle.js';

export interface StoreMirrorOptions {
  /** Full reload period: the fallback should a change notification be missed. */
  readonly refreshIntervalMs: number;
  /** Replaces the whole in-memory copy with what the store holds (a throw leaves it as it was). */
  readonly loadAll: (store: DurableStore) => Promise<void>;
  /** Brings one record of the copy to what the store holds now. */
  readonly loadOne: (store: DurableStore, id: string) => Promise<void>;
  /** The id an announced change is about, when it concerns this copy. */
  readonly idOf: (change: StoreChange) => string | undefined;
  /** A load failed: the copy stays as it was. */
  readonly onError: (err: unknown) => void;
}

/**
 * Keeps an in-memory copy of some of the durable store's records in step with it (runtime keys,
 * resource ownership): a full load when asked (the store opened), on every `resync` (a lost
 * change feed) and every `refreshIntervalMs`; one record at a time as changes are announced
 * (PostgreSQL NOTIFY reaches every instance within milliseconds). A record changed while a full
 * load runs is loaded again after it, since the load's snapshot may predate the change. While
 * the database is away, the copy last loaded keeps serving.
 */
export class StoreMirror {
  private readonly timer: NodeJS.Timeout;
  /** Ids changed while a full load was running. */
  private changedDuringLoad: Set<string> | null = null;
  /** Per id, the load its latest announced change started (forgotten a turn after it ends): see `loadAfterWrite`. */
  private readonly announced = new Map<string, Promise<void>>();
  /** Per id, the last load queued: the next one starts after it. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly handle: StoreHandle,
    private readonly options: StoreMirrorOptions,
  ) {
    handle.onChange((change) => {
      if (change.kind === 'resync') {
        void this.loadAll();
        return;
      }
      const id = options.idOf(change);
      if (id !== undefined) void this.loadAnnounced(id);
    });
    this.timer = setInterval(() => void this.loadAll(), options.refreshIntervalMs);
    this.timer.unref();
  }

  /** Loads everything; resolves false (the copy kept as it was) when the store cannot answer. */
  async loadAll(): Promise<boolean> {
    const store = this.handle.current;
    if (!store) return false;
    const changed = new Set<string>();
    this.changedDuringLoad = changed;
    try {
      await this.options.loadAll(store);
    } catch (err) {
      this.options.onError(err);
      return false;
    } finally {
      if (this.changedDuringLoad === changed) this.changedDuringLoad = null;
    }
    await Promise.all([...changed].map((id) => this.loadOne(id)));
    return true;
  }

  /**
   * Loads one record as the store has it now (after a write on this instance, or an announced
   * change). Loads of one id run one after another: a load that read the record before a later
   * change could otherwise finish after that change's load and put back what it removed.
   */
  loadOne(id: string): Promise<void> {
    this.changedDuringLoad?.add(id);
    const previous = this.running.get(id);
    const load = previous ? previous.then(() => this.readOne(id)) : this.readOne(id);
    this.running.set(id, load);
    void load.finally(() => {
      if (this.running.get(id) === load) this.running.delete(id);
    });
    return load;
  }

  private async readOne(id: string): Promise<void> {
    const store = this.handle.current;
    if (!store) return;
    try {
      await this.options.loadOne(store, id);
    } catch (err) {
      this.options.onError(err);
    }
  }

  /**
   * Brings the copy up to a write this instance just made. The store announced it to this
   * instance's listeners as it committed, before the write resolved, so the load that started
   * then is awaited rather than a second one made; a load only when none was heard.
   */
  async loadAfterWrite(id: string): Promise<void> {
    await (this.announced.get(id) ?? this.loadOne(id));
  }

  private loadAnnounced(id: string): Promise<void> {
    const load = this.loadOne(id).finally(() => {
      // A turn later: the writer of this change (if this instance) has looked by then, even when the load ended at once.
      setImmediate(() => {
        if (this.announced.get(id) === load) this.announced.delete(id);
      });
    });
    this.announced.set(id, load);
    return load;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
