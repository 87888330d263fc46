import { BatchWriter, StoreMirror, type DurableStore, type ResourceKind, type ResourceRecord, type StoreHandle } from '../store/index.js';

export interface RegistryOptions {
  /** The longest a request waits on the database, for a resource this instance has not heard of. */
  readonly requestTimeoutMs: number;
  /** Full reload period (the fallback should a change notification be missed); also how long a miss is remembered. */
  readonly refreshIntervalMs: number;
  readonly onDatabaseError: (err: unknown) => void;
  /** A creation could not be recorded for good (the database was away too long). */
  readonly onRecordDropped: (record: ResourceRecord) => void;
}

const keyOf = (kind: ResourceKind, id: string): string => `${kind}:${id}`;

/**
 * Whether model `a` holds a name before model `b`: the older does; of two made in the same
 * millisecond, the smaller id — the store's order (findModelByArtifact), so every instance picks
 * the same holder whatever order it heard of the two in.
 */
const holdsBefore = (a: ResourceRecord, b: ResourceRecord): boolean => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);

/**
 * Who owns each training resource (SPEC 13), as this instance holds it: every check is a map
 * lookup. Everything is loaded at start, on `resync` and every `refreshIntervalMs`; single
 * changes arrive through the store's change feed (every instance within milliseconds). A
 * resource not in memory is read from the store once, bounded by `requestTimeoutMs`: it may
 * have been created on another instance a moment ago. The events-polling path (a known job,
 * every second) never touches the database.
 */
export class OwnershipRegistry {
  private byKey = new Map<string, ResourceRecord>();
  /** The model holding each `entity/project/name` (holdsBefore: the oldest recorded). */
  private byArtifact = new Map<string, ResourceRecord>();
  /** Resources the store did not have when asked, and when: not asked again before a refresh. */
  private readonly misses = new Map<string, number>();
  /** The upstream account's entity, learned from creations that named none. */
  private entity: string | undefined;
  private readonly mirror: StoreMirror;
  private readonly pendingRecords: BatchWriter<ResourceRecord>;

  constructor(
    private readonly handle: StoreHandle,
    private readonly options: RegistryOptions,
  ) {
    this.mirror = new StoreMirror(handle, {
      refreshIntervalMs: options.refreshIntervalMs,
      onError: options.onDatabaseError,
      loadAll: async (store) => this.replaceAll(await store.listResources()),
      loadOne: (store, key) => this.reload(store, key),
      idOf: (change) => (change.kind === 'resource' && change.resourceKind ? keyOf(change.resourceKind, change.id) : undefined),
    });
    this.pendingRecords = new BatchWriter<ResourceRecord>({
      write: async (batch) => {
        for (const record of batch) this.put(await handle.require().recordResource(record));
      },
      maxBuffered: 10_000,
      onDropped: (record) => options.onRecordDropped(record),
      onWriteError: options.onDatabaseError,
    });
  }

  /** The account's default entity, once an answer showed it. */
  get defaultEntity(): string | undefined {
    return this.entity;
  }

  learnDefaultEntity(entity: string): void {
    this.entity ??= entity;
  }

  /** Loads every record; false (what is held stays) when the store cannot answer. */
  loadAll(): Promise<boolean> {
    return this.mirror.loadAll();
  }

  /** The owner of a resource, or undefined when none is recorded (or the database could not say in time). */
  async ownerOf(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined> {
    const key = keyOf(kind, id);
    const known = this.byKey.get(key);
    if (known) return known;
    const missedAt = this.misses.get(key);
    if (missedAt !== undefined && performance.now() - missedAt < this.options.refreshIntervalMs) return undefined;
    const store = this.handle.current;
    if (!store) return undefined;
    try {
      const record = await store.getResource(kind, id, { timeoutMs: this.options.requestTimeoutMs });
      if (record) this.put(record);
      else this.misses.set(key, performance.now());
      return record;
    } catch (err) {
      this.options.onDatabaseError(err);
      return undefined;
    }
  }

  /** The owner of a model name (`entity/project/name`), from memory. */
  ownerOfArtifact(artifact: string): ResourceRecord | undefined {
    return this.byArtifact.get(artifact);
  }

  /** A team's trained models (records with an artifact name): what its /v1/models adds (SPEC 21). */
  *trainedModelsOf(team: string): Iterable<ResourceRecord> {
    for (const record of this.byArtifact.values()) if (record.team === team) yield record;
  }

  /**
   * Records a creation: first owner wins (answers the holder). While the database is away the
   * record is kept here, so this instance already enforces it, and written when it is back.
   */
  async record(record: ResourceRecord): Promise<ResourceRecord> {
    const store = this.handle.current;
    try {
      if (!store) throw new Error('the database has not been reached');
      const holder = await store.recordResource(record);
      this.put(holder);
      return holder;
    } catch (err) {
      this.options.onDatabaseError(err);
      this.put(record);
      this.pendingRecords.add(record);
      return record;
    }
  }

  /** Forgets a released resource (a deleted model). */
  async release(kind: ResourceKind, id: string): Promise<void> {
    this.remove(keyOf(kind, id));
    try {
      await this.handle.require().releaseResource(kind, id);
      // A load the creation started may have read the record before it was deleted: the deletion's own load runs after it.
      await this.mirror.loadAfterWrite(keyOf(kind, id));
    } catch (err) {
      this.options.onDatabaseError(err);
    }
  }

  /** Applies an admin write at once on this instance (others hear it through the change feed). */
  apply(record: ResourceRecord | undefined, kind: ResourceKind, id: string): void {
    if (record) this.put(record);
    else this.remove(keyOf(kind, id));
  }

  async close(deadline: number): Promise<void> {
    this.mirror.stop();
    await this.pendingRecords.close(deadline);
  }

  private replaceAll(records: readonly ResourceRecord[]): void {
    this.byKey = new Map();
    this.byArtifact = new Map();
    this.misses.clear();
    for (const record of records) this.put(record);
  }

  private async reload(store: DurableStore, key: string): Promise<void> {
    const colon = key.indexOf(':');
    const record = await store.getResource(key.slice(0, colon) as ResourceKind, key.slice(colon + 1));
    if (record) this.put(record);
    else this.remove(key);
  }

  private put(record: ResourceRecord): void {
    const key = keyOf(record.kind, record.id);
    const previous = this.byKey.get(key);
    this.byKey.set(key, record);
    this.misses.delete(key);
    if (previous?.artifact && previous.artifact !== record.artifact) this.releaseName(previous, previous.artifact);
    if (record.artifact) {
      const holder = this.byArtifact.get(record.artifact);
      if (!holder || holder.id === record.id || holdsBefore(record, holder)) this.byArtifact.set(record.artifact, record);
    }
  }

  private remove(key: string): void {
    const previous = this.byKey.get(key);
    this.byKey.delete(key);
    if (previous?.artifact) this.releaseName(previous, previous.artifact);
  }

  /** `previous` no longer has `artifact` (removed or renamed): if it held the name, the first of the models left with it now does. */
  private releaseName(previous: ResourceRecord, artifact: string): void {
    if (this.byArtifact.get(artifact) !== previous) return;
    this.byArtifact.delete(artifact);
    for (const other of this.byKey.values()) {
      if (other.artifact !== artifact) continue;
      const holder = this.byArtifact.get(artifact);
      if (!holder || holdsBefore(other, holder)) this.byArtifact.set(artifact, other);
    }
  }
}
