import type { StoreChange, StoreHandle } from '../store/index.js';
import type { RuntimeKeys } from './runtime-keys.js';

export interface KeySyncOptions {
  /** Full reload period: the fallback should a change notification be missed. */
  readonly refreshIntervalMs: number;
  /** A load failed: the keys this instance holds stay as they were. */
  readonly onError: (err: unknown) => void;
}

/**
 * Keeps this instance's RuntimeKeys in step with the durable store: a full load when the store
 * opens, on every `resync` (a lost change feed) and every `refreshIntervalMs`; one key at a
 * time as changes are announced (PostgreSQL NOTIFY reaches every instance within milliseconds).
 * While the database is away, the keys last loaded keep serving.
 */
export class KeySync {
  private readonly timer: NodeJS.Timeout;
  /** Keys changed while a full load was running: its snapshot may predate them. */
  private changedDuringLoad: Set<string> | null = null;

  constructor(
    private readonly handle: StoreHandle,
    private readonly keys: RuntimeKeys,
    private readonly options: KeySyncOptions,
  ) {
    handle.onChange((change) => this.onChange(change));
    this.timer = setInterval(() => void this.loadAll(), options.refreshIntervalMs);
    this.timer.unref();
  }

  /** Loads every key; resolves false (keys kept as they were) when the store cannot answer. */
  async loadAll(): Promise<boolean> {
    const store = this.handle.current;
    if (!store) return false;
    const changed = new Set<string>();
    this.changedDuringLoad = changed;
    try {
      this.keys.replaceAll(await store.loadKeys());
    } catch (err) {
      this.options.onError(err);
      return false;
    } finally {
      if (this.changedDuringLoad === changed) this.changedDuringLoad = null;
    }
    await Promise.all([...changed].map((id) => this.loadOne(id)));
    return true;
  }

  /** Loads one key as the store has it now (after a write on this instance, or an announced change). */
  async loadOne(id: string): Promise<void> {
    const store = this.handle.current;
    if (!store) return;
    this.changedDuringLoad?.add(id);
    try {
      this.keys.apply(id, await store.loadKey(id));
    } catch (err) {
      this.options.onError(err);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private onChange(change: StoreChange): void {
    if (change.kind === 'key') void this.loadOne(change.id);
    else if (change.kind === 'resync') void this.loadAll();
  }
}
