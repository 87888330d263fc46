import { setTimeout as delay, setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { insertAdminKey, markAdminKeyRevoked, patchAdminKey, rotateAdminSecret, selectStoredAdminKeys } from './admin-keys/admin-key-queries.js';
import { insertAudit, selectAudit } from './audit/audit-queries.js';
import { insertSession, removeSession, selectSession } from './sessions/session-queries.js';
import { withinDeadline } from './core/deadline.js';
import type * as Store from './core/durable-store.js';
import { DatabaseUnavailableError } from './core/errors.js';
import { isoInstant } from './core/rows.js';
import type { Database } from './core/schema.js';
import type { StoreBackend } from './core/store-backend.js';
import { insertKey, markRevoked, patchKey, rotateSecret, selectKey, selectKeys, selectStoredKeys } from './keys/key-queries.js';
import { deleteLedgerChunk, insertLedger, selectLedgerPage } from './ledger/ledger-queries.js';
import { aggregateLedger } from './ledger/usage-aggregate.js';
import { selectRecentOutcomes, selectUsageCells } from './ledger/overview-queries.js';
import { KyselyOutboxStore } from './outbox/outbox-store.js';
import { postgresLedgerFile, sqliteLedgerFile } from './outbox/export-queries.js';
import { insertTeam, patchTeam, removeTeam, selectTeam, selectTeams } from './teams/team-queries.js';
import { deleteResource, insertResourceIfAbsent, selectModelByArtifact, selectResource, selectResources, upsertResource } from './resources/resource-queries.js';

/** A write's result, and the changes to announce once it has committed. */
interface WriteOutcome<T> {
  value: T;
  changes: Store.StoreChange[];
}

/** The one DurableStore: every query is written once (Kysely), the dialect fills in the differences. */
export class KyselyDurableStore implements Store.DurableStore {
  readonly dialect: 'postgres' | 'sqlite';
  readonly appliedMigrations: readonly number[];
  reachable = true;
  private closing: Promise<void> | undefined;
  readonly outbox: Store.OutboxStore;

  constructor(private readonly backend: StoreBackend) {
    this.dialect = backend.dialect.name;
    this.appliedMigrations = backend.appliedMigrations;
    this.outbox = new KyselyOutboxStore(
      backend.dialect.name,
      (work) => this.call(work),
      (work) => this.write(async (trx) => ({ value: await work(trx), changes: [] })),
      backend.file === undefined ? undefined : 'sqlite' in backend.file ? sqliteLedgerFile(backend.file.sqlite, backend.timeoutMs) : postgresLedgerFile(backend.file.postgres, backend.timeoutMs),
    );
  }

  /** Every call: refused once closed, bounded in time, failures typed, reachability noted. */
  private async call<T>(work: (db: Kysely<Database>) => Promise<T>, timeoutMs = this.backend.timeoutMs): Promise<T> {
    if (this.closing) throw new DatabaseUnavailableError('the store is closed');
    try {
      const result = await withinDeadline(timeoutMs, () => work(this.backend.db));
      this.reachable = true;
      return result;
    } catch (error) {
      const failure = this.backend.classifyFailure(error);
      // A query the database refused (a constraint, a bad cursor) still reached it.
      this.reachable = !(failure instanceof DatabaseUnavailableError);
      throw failure;
    }
  }

  /**
   * A write transaction that announces its changes: NOTIFY inside it (delivered at commit), and
   * local listeners right after the commit — even when the caller has stopped waiting, since the
   * write happened all the same.
   */
  private async write<T>(work: (trx: Kysely<Database>) => Promise<WriteOutcome<T>>): Promise<T> {
    const { dialect, feed } = this.backend;
    return this.call((db) =>
      db.connection().execute(async (conn) => {
        await dialect.beginWrite.execute(conn);
        let outcome: WriteOutcome<T>;
        try {
          outcome = await work(conn);
          for (const change of outcome.changes) await dialect.publish(conn, feed.encode(change));
          await sql`commit`.execute(conn);
        } catch (error) {
          await sql`rollback`.execute(conn).catch(() => undefined);
          throw error;
        }
        for (const change of outcome.changes) feed.committed(change);
        return outcome.value;
      }),
    );
  }

  createKey(record: Store.ApiKeyRecord, sha256: string): Promise<Store.ApiKeyRecord> {
    return this.write(async (trx) => ({ value: await insertKey(trx, this.backend.dialect, record, sha256), changes: [keyChange(record.id)] }));
  }

  getKey(id: string): Promise<Store.ApiKeyRecord | undefined> {
    return this.call((db) => selectKey(db, id));
  }

  listKeys(team?: string): Promise<Store.ApiKeyRecord[]> {
    return this.call((db) => selectKeys(db, team));
  }

  updateKey(id: string, patch: Store.KeyPatch): Promise<Store.ApiKeyRecord | undefined> {
    return this.write(async (trx) => {
      const value = await patchKey(trx, this.backend.dialect, id, patch);
      return { value, changes: value ? [keyChange(id)] : [] };
    });
  }

  rotateKey(id: string, newSha256: string, previousValidUntil: string | null): Promise<Store.ApiKeyRecord | undefined> {
    return this.write(async (trx) => {
      const value = await rotateSecret(trx, this.backend.dialect, id, newSha256, previousValidUntil);
      return { value, changes: value ? [keyChange(id)] : [] };
    });
  }

  revokeKey(id: string): Promise<boolean> {
    return this.write(async (trx) => {
      const value = await markRevoked(trx, id);
      return { value, changes: value ? [keyChange(id)] : [] };
    });
  }

  loadKeys(): Promise<Store.StoredKey[]> {
    return this.call((db) => selectStoredKeys(db));
  }

  async loadKey(id: string, options?: Store.ReadOptions): Promise<Store.StoredKey | undefined> {
    const [stored] = await this.call((db) => selectStoredKeys(db, id), this.boundOf(options));
    return stored;
  }

  createTeam(record: Store.TeamRecord): Promise<Store.TeamRecord> {
    return this.write(async (trx) => ({ value: await insertTeam(trx, this.backend.dialect, record), changes: [change('team', record.id)] }));
  }

  getTeam(id: string, options?: Store.ReadOptions): Promise<Store.TeamRecord | undefined> {
    return this.call((db) => selectTeam(db, id), this.boundOf(options));
  }

  listTeams(): Promise<Store.TeamRecord[]> {
    return this.call((db) => selectTeams(db));
  }

  updateTeam(id: string, patch: Store.TeamPatch): Promise<Store.TeamRecord | undefined> {
    return this.write(async (trx) => {
      const value = await patchTeam(trx, this.backend.dialect, id, patch);
      return { value, changes: value ? [change('team', id)] : [] };
    });
  }

  deleteTeam(id: string): Promise<Store.TeamDeletion> {
    return this.write(async (trx) => {
      const value = await removeTeam(trx, id);
      return { value, changes: value === 'deleted' ? [change('team', id)] : [] };
    });
  }

  createAdminKey(record: Store.AdminKeyRecord, sha256: string): Promise<Store.AdminKeyRecord> {
    return this.write(async (trx) => ({ value: await insertAdminKey(trx, this.backend.dialect, record, sha256), changes: [change('admin_key', record.id)] }));
  }

  updateAdminKey(id: string, patch: Store.AdminKeyPatch): Promise<Store.AdminKeyRecord | undefined> {
    return this.write(async (trx) => {
      const value = await patchAdminKey(trx, this.backend.dialect, id, patch);
      return { value, changes: value ? [change('admin_key', id)] : [] };
    });
  }

  rotateAdminKey(id: string, newSha256: string, previousValidUntil: string | null): Promise<Store.AdminKeyRecord | undefined> {
    return this.write(async (trx) => {
      const value = await rotateAdminSecret(trx, this.backend.dialect, id, newSha256, previousValidUntil);
      return { value, changes: value ? [change('admin_key', id)] : [] };
    });
  }

  revokeAdminKey(id: string): Promise<boolean> {
    return this.write(async (trx) => {
      const value = await markAdminKeyRevoked(trx, id);
      return { value, changes: value ? [change('admin_key', id)] : [] };
    });
  }

  loadAdminKeys(): Promise<Store.StoredAdminKey[]> {
    return this.call((db) => selectStoredAdminKeys(db));
  }

  async loadAdminKey(id: string, options?: Store.ReadOptions): Promise<Store.StoredAdminKey | undefined> {
    const [stored] = await this.call((db) => selectStoredAdminKeys(db, id), this.boundOf(options));
    return stored;
  }

  getResource(kind: Store.ResourceKind, id: string, options?: Store.ReadOptions): Promise<Store.ResourceRecord | undefined> {
    return this.call((db) => selectResource(db, kind, id), this.boundOf(options));
  }

  findModelByArtifact(artifact: string, options?: Store.ReadOptions): Promise<Store.ResourceRecord | undefined> {
    return this.call((db) => selectModelByArtifact(db, artifact), this.boundOf(options));
  }

  recordResource(record: Store.ResourceRecord): Promise<Store.ResourceRecord> {
    return this.write(async (trx) => {
      const { row, inserted } = await insertResourceIfAbsent(trx, record);
      return { value: row, changes: inserted ? [resourceChange(row.kind, row.id)] : [] };
    });
  }

  assignResource(record: Store.ResourceRecord): Promise<Store.ResourceRecord> {
    return this.write(async (trx) => ({ value: await upsertResource(trx, record), changes: [resourceChange(record.kind, record.id)] }));
  }

  releaseResource(kind: Store.ResourceKind, id: string): Promise<boolean> {
    return this.write(async (trx) => {
      const value = await deleteResource(trx, kind, id);
      return { value, changes: value ? [resourceChange(kind, id)] : [] };
    });
  }

  listResources(filter: Store.ResourceFilter = {}): Promise<Store.ResourceRecord[]> {
    return this.call((db) => selectResources(db, filter));
  }

  createSession(record: Store.ConsoleSessionRecord): Promise<void> {
    return this.call((db) => insertSession(db, record));
  }

  getSession(tokenSha256: string, options?: Store.ReadOptions): Promise<Store.ConsoleSessionRecord | undefined> {
    return this.call((db) => selectSession(db, tokenSha256), this.boundOf(options));
  }

  deleteSession(tokenSha256: string): Promise<boolean> {
    return this.call((db) => removeSession(db, tokenSha256));
  }

  appendAudit(entry: Store.AuditEntry): Promise<void> {
    return this.call((db) => insertAudit(db, entry));
  }

  listAudit(query: Store.AuditQuery): Promise<Store.AuditEntry[]> {
    return this.call((db) => selectAudit(db, query));
  }

  async insertLedgerRows(rows: readonly Store.LedgerRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    return this.write(async (trx) => ({ value: await insertLedger(trx, this.backend.dialect, rows, this.backend.insertLedgerValues), changes: [] }));
  }

  aggregateUsage(query: Store.UsageAggregateQuery): Promise<Store.UsageAggregate[]> {
    return this.call((db) => aggregateLedger(db, this.backend.dialect, query));
  }

  usageCells(query: Store.UsageCellQuery): Promise<Store.UsageCell[]> {
    return this.call((db) => selectUsageCells(db, this.backend.dialect, query));
  }

  recentOutcomes(query: Store.RecentOutcomesQuery): Promise<Store.RecentOutcomes> {
    return this.call((db) => selectRecentOutcomes(db, query));
  }

  pageLedger(query: Store.LedgerPageQuery): Promise<Store.LedgerPage> {
    return this.call((db) => selectLedgerPage(db, query));
  }

  /** Chunk by chunk, each its own bounded call: a big retention delete never holds a lock or the event loop for long. */
  async deleteLedgerBefore(instant: string): Promise<number> {
    const before = isoInstant(instant);
    let total = 0;
    for (;;) {
      const { deleted, more } = await this.write(async (trx) => ({ value: await deleteLedgerChunk(trx, this.backend.dialect, before), changes: [] }));
      total += deleted;
      if (!more) return total;
      if (this.backend.dialect.blocksEventLoop) await nextTurn();
    }
  }

  onChange(listener: Store.StoreChangeListener): () => void {
    return this.backend.feed.subscribe(listener);
  }

  async ping(): Promise<boolean> {
    try {
      await this.call((db) => sql`select 1`.execute(db));
      return true;
    } catch {
      return false;
    }
  }

  /** Bounded by timeoutMs: on a dead network, ending a connection can wait forever for the other side. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const release = Promise.all([this.backend.release(), this.backend.db.destroy()]).then(() => undefined);
      const bound = delay(this.backend.timeoutMs, undefined, { ref: false });
      await Promise.race([release.catch(() => undefined), bound]);
    })();
    return this.closing;
  }

  private boundOf(options: Store.ReadOptions | undefined): number {
    const tighter = options?.timeoutMs;
    return tighter === undefined ? this.backend.timeoutMs : Math.min(tighter, this.backend.timeoutMs);
  }
}

const change = (kind: 'team' | 'admin_key', id: string): Store.StoreChange => ({ kind, id });
const keyChange = (id: string): Store.StoreChange => ({ kind: 'key', id });
const resourceChange = (resourceKind: Store.ResourceKind, id: string): Store.StoreChange => ({ kind: 'resource', id, resourceKind });
