/**
 * The durable store's contract (SPEC 11–14): records, queries and the one interface that the
 * PostgreSQL and SQLite implementations share. Timestamps are ISO strings, UTC, with
 * milliseconds and `Z` (`2025-01-31T23:59:59.999Z`); days are `YYYY-MM-DD` (UTC).
 */

import type { FinishedKept, LeaseFence, LedgerMark, OutboxDelivery, OutboxFilter, OutboxInsert, OutboxResult } from './outbox-records.js';

/** Where the store lives: `url` set → PostgreSQL; empty → the SQLite file at `path`. */
export interface DatabaseSettings {
  url: string;
  /** SQLite file path, e.g. `data/tollgate.db` (its parent directories are created). */
  path: string;
  /** Bound on any one database call from the request path or admin (default 2000). */
  timeoutMs?: number;
  /** Pool size for PostgreSQL (default 10). */
  poolSize?: number;
}

/** A key created through the admin API (SPEC 12.1). Never carries its secret. */
export interface ApiKeyRecord {
  id: string;
  team: string;
  projects: string[];
  defaultProject: string;
  limits: Record<string, number | boolean>;
  /** Its model patterns (SPEC 21); null: none of its own. */
  models?: string[] | null;
  description: string | null;
  createdAt: string;
  expiresAt: string | null;
  disabled: boolean;
  revokedAt: string | null;
}

/** What an admin may change on a key. */
export type KeyPatch = Partial<Pick<ApiKeyRecord, 'projects' | 'defaultProject' | 'limits' | 'models' | 'description' | 'expiresAt' | 'disabled'>>;

/** A secret's SHA-256 hex digest; `validUntil` null is the current secret, else a rotated one still in its overlap. */
export interface KeySecret {
  sha256: string;
  validUntil: string | null;
}

/** A key with the digests that authenticate it (for the gateway's in-memory key cache). */
export interface StoredKey {
  record: ApiKeyRecord;
  secrets: KeySecret[];
}

/**
 * A kind of owned resource: `model` and `training_job` (SPEC 13), or any kind a config route
 * names (SPEC 20; validated in config/routes.ts, stored as text since schema version 4).
 */
export type ResourceKind = string;

/** Who owns a training resource (SPEC 13). */
export interface ResourceRecord {
  kind: ResourceKind;
  id: string;
  team: string;
  project: string;
  /** `entity/project/name` of a model's artifact, else null. */
  artifact: string | null;
  createdAt: string;
}

export interface ResourceFilter {
  team?: string;
  project?: string;
  kind?: ResourceKind;
}

/** A team record (SPEC 16): its limits hold over all of the team's traffic. */
export interface TeamRecord {
  id: string;
  description: string | null;
  limits: Record<string, number | boolean>;
  /** Its model patterns (SPEC 21); null: none of its own. */
  models?: string[] | null;
  disabled: boolean;
  createdAt: string;
}

export type TeamPatch = Partial<Pick<TeamRecord, 'description' | 'limits' | 'models' | 'disabled'>>;

/** What deleting a team did: `in_use` while a live key still names it (SPEC 16: 409 team_in_use). */
export type TeamDeletion = 'deleted' | 'not_found' | 'in_use';

export type AdminRoleName = 'admin' | 'viewer' | 'team-admin';

/** An admin key made through `/admin/admin-keys` (SPEC 16). Never carries its secret. */
export interface AdminKeyRecord {
  id: string;
  role: AdminRoleName;
  /** The team of a `team-admin`; null for the other roles. */
  team: string | null;
  description: string | null;
  createdAt: string;
  expiresAt: string | null;
  disabled: boolean;
  revokedAt: string | null;
}

export type AdminKeyPatch = Partial<Pick<AdminKeyRecord, 'role' | 'team' | 'description' | 'expiresAt' | 'disabled'>>;

export interface StoredAdminKey {
  record: AdminKeyRecord;
  secrets: KeySecret[];
}

/** A console session (SPEC 17): never its token, only the token's digest. */
export interface ConsoleSessionRecord {
  tokenSha256: string;
  adminKeyId: string;
  /** What a cookie-authenticated write must send as `x-csrf-token`. */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
  /** The person of an identity-provider sign-in (SPEC 25); absent for a key's session. */
  person?: SessionPerson;
}

/** Who signed in through the identity provider, and the role their groups gave them at sign-in. */
export interface SessionPerson {
  /** `oidc:<sub>`: the actor the audit log names. */
  readonly id: string;
  readonly email: string | null;
  readonly name: string | null;
  readonly role: 'admin' | 'viewer' | 'team-admin';
  readonly team: string | null;
}

/** One audited admin write or reload (SPEC 12.3). */
export interface AuditEntry {
  at: string;
  actor: string;
  /** The actor's admin role (SPEC 16); absent for a SIGHUP reload and entries older than roles. */
  actorRole?: string;
  /** The actor's email, for a person signed in through the identity provider (SPEC 25). */
  actorEmail?: string;
  action: string;
  target: string;
  result: string;
  requestId: string;
}

export interface AuditQuery {
  /** First UTC day, inclusive. */
  from: string;
  /** Last UTC day, inclusive. */
  to: string;
  actor?: string;
  action?: string;
}

/** One metered request (SPEC 14.1). */
export interface LedgerRow {
  /** Made by the gateway for this request (UUIDv7): the row's key, and what tells a retried batch from a new request. */
  id: string;
  /** The x-request-id the client got: its own when it sent one, so shared by any requests that reused it. */
  requestId: string;
  at: string;
  team: string;
  project: string;
  keyId: string;
  route: string;
  method: string;
  status: number;
  model: string;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Cost in 1e-9 currency units, an integer so that sums are exact. */
  costNanos: number;
  estimated: boolean;
  requestBytes: number;
  durationMs: number;
  /** The request's trace (SPEC 18), when tracing was on: what to look up in Tempo or Jaeger. */
  traceId: string | null;
  /** The model name the client sent, when another model served it (an alias or a fallback, SPEC 22). */
  requestedModel: string | null;
  /** The model a fallback replaced (SPEC 22); null when the first model served. */
  fallbackFrom: string | null;
}

export type UsageGroupBy = 'model' | 'key' | 'day' | 'month' | 'route';

export interface UsageAggregateQuery {
  from: string;
  to: string;
  team?: string;
  project?: string;
  key?: string;
  groupBy?: UsageGroupBy;
}

/** Sums for one team/project, and one value of the groupBy dimension when asked for. */
export interface UsageAggregate {
  team: string;
  project: string;
  model?: string;
  key?: string;
  day?: string;
  /** `YYYY-MM` */
  month?: string;
  /** `"<METHOD> <route>"` */
  route?: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costNanos: number;
}

/** The inclusive UTC days to sum per day and team, or per team, project and model (the console's Overview). */
export interface UsageCellQuery {
  from: string;
  to: string;
  team?: string;
  by: 'day-team' | 'team-project-model';
}

/** One sum; the dimensions the query did not group by are ''. */
export interface UsageCell {
  day: string;
  team: string;
  project: string;
  model: string;
  requests: number;
  totalTokens: number;
  costNanos: number;
}

/** A recent window of the ledger, `[since, until)` as instants. */
export interface RecentOutcomesQuery {
  since: string;
  until: string;
  team?: string;
}

export interface RecentOutcomes {
  requests: number;
  /** Answered 429 (a limit or a budget). */
  rejected429: number;
  /** Answered 5xx (the upstream failed or timed out, or the gateway could not serve it). */
  upstreamErrors: number;
}

export interface LedgerPageQuery {
  from: string;
  to: string;
  team?: string;
  project?: string;
  key?: string;
  /** A `lastId` from an earlier page: this page starts after that row. */
  after?: string;
  /** 1..1000 */
  limit: number;
}

export interface LedgerPage {
  rows: LedgerRow[];
  hasMore: boolean;
  /** Cursor of the last row of this page (pass as `after`), null when the page is empty. */
  lastId: string | null;
}

export type * from './outbox-records.js';

/** The outbox's table, its lease and the export cursors (SPEC 24). */
export interface OutboxStore {
  insertDeliveries(rows: readonly OutboxInsert[]): Promise<number>;
  /** Takes or renews a lease; false while another owner holds it unexpired. */
  takeLease(name: string, owner: string, now: string, until: string): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  dueDeliveries(now: string, limit: number): Promise<OutboxDelivery[]>;
  recordResult(id: string, result: OutboxResult): Promise<void>;
  listDeliveries(filter: OutboxFilter): Promise<OutboxDelivery[]>;
  getDelivery(id: string): Promise<OutboxDelivery | undefined>;
  pendingCounts(): Promise<Map<string, number>>;
  /** Retention: deletes delivered and dead deliveries last changed before `before` (those `kept` names, before its own instant); answers how many. */
  deleteFinishedBefore(before: string, kept: FinishedKept): Promise<number>;
  exportCursor(sink: string): Promise<LedgerMark | null>;
  /**
   * Advances the cursor to the row `mark.id` and records the batch delivered, in one transaction.
   * With `fence`, only while that lease is still this owner's (the lease row is locked meanwhile):
   * false, and nothing written, when another instance has taken it over.
   */
  commitExport(sink: string, mark: LedgerMark, delivery: OutboxInsert, result: OutboxResult, fence?: LeaseFence): Promise<boolean>;
  ledgerAfter(mark: LedgerMark | null, before: string, limit: number): Promise<LedgerRow[]>;
  /** How a connection of its own reads the ledger past a cursor, off the event loop; undefined in memory. */
  ledgerFile(): LedgerFile | undefined;
}

/**
 * What a second connection needs to read the ledger in write order, off the event loop: the
 * statements answer raw rows, each of `fields` in order, with LedgerRow's types (`at` as ISO
 * text, numbers as numbers). SQLite: `select(afterRowid, limit)`, each row's rowid first, then the
 * fields. PostgreSQL: `selectFirst(before, limit)` and `selectAfter(before, afterAt, afterId, limit)`
 * (rows written before `before`, past the cursor), the fields only.
 */
export type LedgerFile =
  | { readonly dialect: 'sqlite'; readonly path: string; readonly select: string; readonly fields: readonly (keyof LedgerRow)[]; readonly busyTimeoutMs: number }
  | { readonly dialect: 'postgres'; readonly url: string; readonly selectFirst: string; readonly selectAfter: string; readonly fields: readonly (keyof LedgerRow)[]; readonly timeoutMs: number };

/**
 * A key or resource was written (by any instance; `resourceKind` is set for resources), or
 * `resync`: the feed may have missed changes, reload everything.
 */
export type StoreChange = { kind: 'key' | 'resource' | 'team' | 'admin_key'; id: string; resourceKind?: ResourceKind } | { kind: 'resync' };

export type StoreChangeListener = (change: StoreChange) => void;

/** A tighter bound than `timeoutMs` for a read on the request path. */
export interface ReadOptions {
  timeoutMs?: number;
}

/**
 * Keys, resource ownership, the audit log and the usage ledger, in PostgreSQL or SQLite.
 * Every method rejects with DatabaseUnavailableError when the database cannot answer within its
 * bound; the other typed errors (KeyIdTakenError, …) mean the database answered "no".
 */
export interface DurableStore {
  readonly dialect: 'postgres' | 'sqlite';
  /**
   * Whether the last call reached the database (false after a DatabaseUnavailableError, until
   * a call gets through): what `/readyz` reports. Key reloads keep it fresh when idle.
   */
  readonly reachable: boolean;
  /** Migration versions this open applied (empty when the schema was already current). */
  readonly appliedMigrations: readonly number[];

  /** Stores a new key and its current secret. KeyIdTakenError when the id exists or was revoked. */
  createKey(record: ApiKeyRecord, sha256: string): Promise<ApiKeyRecord>;
  /** A key by id, revoked ones included (revokedAt set). */
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Keys (revoked ones included), by createdAt then id. */
  listKeys(team?: string): Promise<ApiKeyRecord[]>;
  /** Undefined when the key does not exist or is revoked. */
  updateKey(id: string, patch: KeyPatch): Promise<ApiKeyRecord | undefined>;
  /**
   * Makes `newSha256` the current secret. The previous one stays valid until
   * `previousValidUntil`, or is deleted when that is null or past. Undefined when the key does
   * not exist or is revoked.
   */
  rotateKey(id: string, newSha256: string, previousValidUntil: string | null): Promise<ApiKeyRecord | undefined>;
  /** Revokes for good (its secrets stay its own, refused as revoked); false when unknown or revoked already. */
  revokeKey(id: string): Promise<boolean>;
  /** Every key with its secrets still valid (a revoked key with the ones it had), for the key cache. */
  loadKeys(): Promise<StoredKey[]>;
  loadKey(id: string, options?: ReadOptions): Promise<StoredKey | undefined>;

  /** Stores a new team. TeamIdTakenError when the id exists. */
  createTeam(record: TeamRecord): Promise<TeamRecord>;
  getTeam(id: string, options?: ReadOptions): Promise<TeamRecord | undefined>;
  /** Teams by id. */
  listTeams(): Promise<TeamRecord[]>;
  updateTeam(id: string, patch: TeamPatch): Promise<TeamRecord | undefined>;
  /** Deletes a team no live key names; `in_use` (nothing deleted) while one does. */
  deleteTeam(id: string): Promise<TeamDeletion>;

  /** As createKey, for admin keys. */
  createAdminKey(record: AdminKeyRecord, sha256: string): Promise<AdminKeyRecord>;
  updateAdminKey(id: string, patch: AdminKeyPatch): Promise<AdminKeyRecord | undefined>;
  rotateAdminKey(id: string, newSha256: string, previousValidUntil: string | null): Promise<AdminKeyRecord | undefined>;
  revokeAdminKey(id: string): Promise<boolean>;
  loadAdminKeys(): Promise<StoredAdminKey[]>;
  loadAdminKey(id: string, options?: ReadOptions): Promise<StoredAdminKey | undefined>;

  getResource(kind: ResourceKind, id: string, options?: ReadOptions): Promise<ResourceRecord | undefined>;
  /** The oldest model recorded with this `entity/project/name`. */
  findModelByArtifact(artifact: string, options?: ReadOptions): Promise<ResourceRecord | undefined>;
  /** Inserts unless kind+id is recorded already; answers the row that holds (first owner wins). */
  recordResource(record: ResourceRecord): Promise<ResourceRecord>;
  /** Sets the owner (admin adoption); an existing row keeps its createdAt, and its artifact unless one is given. */
  assignResource(record: ResourceRecord): Promise<ResourceRecord>;
  releaseResource(kind: ResourceKind, id: string): Promise<boolean>;
  /** By createdAt, kind, id. */
  listResources(filter?: ResourceFilter): Promise<ResourceRecord[]>;

  /** Stores a new session, deleting the ones expired by its createdAt. */
  createSession(record: ConsoleSessionRecord): Promise<void>;
  /** A session by its token's digest, expired ones included until a sign-in purges them. */
  getSession(tokenSha256: string, options?: ReadOptions): Promise<ConsoleSessionRecord | undefined>;
  /** Ends a session; false when there was none. */
  deleteSession(tokenSha256: string): Promise<boolean>;

  appendAudit(entry: AuditEntry): Promise<void>;
  /** Entries in time order. */
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;

  /** Inserts in one transaction; a row whose id is present already (a retried batch) is skipped. Answers how many were new. */
  insertLedgerRows(rows: readonly LedgerRow[]): Promise<number>;
  aggregateUsage(query: UsageAggregateQuery): Promise<UsageAggregate[]>;
  /** Sums per UTC day and team, or per team, project and model. */
  usageCells(query: UsageCellQuery): Promise<UsageCell[]>;
  recentOutcomes(query: RecentOutcomesQuery): Promise<RecentOutcomes>;
  /** Rows in time order (at, then id), by keyset. */
  pageLedger(query: LedgerPageQuery): Promise<LedgerPage>;
  /** Deletes rows older than `instant` (retention); answers how many. */
  deleteLedgerBefore(instant: string): Promise<number>;

  /** The notification outbox (SPEC 24). */
  readonly outbox: OutboxStore;

  /** Calls `listener` after each committed key/resource write; answers the unsubscribe function. */
  onChange(listener: StoreChangeListener): () => void;
  /** Whether the database answers a trivial query within `timeoutMs`. */
  ping(): Promise<boolean>;
  /** Releases connections and files; idempotent. */
  close(): Promise<void>;
}
