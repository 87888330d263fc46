import type { ColumnType, Generated } from 'kysely';

/**
 * The tables as Kysely sees them, for both dialects. Select types admit what either driver
 * hands back (pg: Date, boolean, parsed JSON, int8 as string; better-sqlite3: text and
 * integers); rows.ts turns them into the records of durable-store.ts.
 */

/** timestamptz in PostgreSQL, ISO text in SQLite; always written as an ISO string. */
type Timestamp = ColumnType<Date | string, string, string>;
type NullableTimestamp = ColumnType<Date | string | null, string | null, string | null>;
/** boolean in PostgreSQL, 0/1 in SQLite. */
type Flag = ColumnType<boolean | number, boolean | number, boolean | number>;
/** jsonb in PostgreSQL, text in SQLite; always written as JSON text. */
type Json = ColumnType<unknown, string, string>;
/** bigint: pg answers int8 as a string. */
type BigCount = ColumnType<number | string, number, number>;

export interface SchemaMigrationsTable {
  version: number;
  applied_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  team: string;
  projects: Json;
  default_project: string;
  limits: Json;
  /** Version 7 (SPEC 21): the key's model patterns, null for none of its own. */
  models: Json | null;
  description: string | null;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  disabled: Flag;
  revoked_at: NullableTimestamp;
}

export interface KeySecretsTable {
  sha256: string;
  key_id: string;
  valid_until: NullableTimestamp;
}

export interface ResourcesTable {
  kind: string;
  id: string;
  team: string;
  project: string;
  artifact: string | null;
  created_at: Timestamp;
}

export interface AuditLogTable {
  id: Generated<number | string>;
  at: Timestamp;
  actor: string;
  action: string;
  target: string;
  result: string;
  request_id: string;
  /** Version 3: the role of the admin key (null for entries written before roles existed). */
  actor_role: string | null;
  /** Version 10: the email of a person signed in through the identity provider (SPEC 25). */
  actor_email: string | null;
}

export interface TeamsTable {
  id: string;
  description: string | null;
  limits: Json;
  /** Version 7 (SPEC 21): the team's model patterns, null for none of its own. */
  models: Json | null;
  disabled: Flag;
  created_at: Timestamp;
}

export interface AdminKeysTable {
  id: string;
  role: string;
  team: string | null;
  description: string | null;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  disabled: Flag;
  revoked_at: NullableTimestamp;
}

export interface LedgerTable {
  id: string;
  request_id: string;
  at: Timestamp;
  team: string;
  project: string;
  key_id: string;
  route: string;
  method: string;
  status: number;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_nanos: BigCount;
  estimated: Flag;
  request_bytes: BigCount;
  duration_ms: number;
  trace_id: string | null;
  /** Version 8 (SPEC 22). */
  requested_model: string | null;
  fallback_from: string | null;
}

/** Version 6 (SPEC 17): one signed-in console browser. */
export interface ConsoleSessionsTable {
  token_sha256: string;
  admin_key_id: string;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** Version 10: the person of an identity-provider sign-in (JSON), null for a key's session. */
  person: string | null;
}

/**
 * Version 6: the ledger summed per UTC day and every dimension the usage API groups or filters
 * by, kept in step with the ledger by its inserts and retention deletes (same transaction).
 */
export interface LedgerDailyTable {
  day: string;
  team: string;
  project: string;
  key_id: string;
  model: string;
  method: string;
  route: string;
  requests: BigCount;
  prompt_tokens: BigCount;
  completion_tokens: BigCount;
  total_tokens: BigCount;
  cost_nanos: BigCount;
}

/** Version 9 (SPEC 24): one delivery of one event (or one export batch) to one sink. */
export interface OutboxTable {
  id: string;
  sink: string;
  event_id: string;
  type: string;
  team: string | null;
  payload: Json;
  state: string;
  attempts: number;
  next_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_status: number | null;
  last_error: string | null;
}

/** Version 9: who delivers (one instance at a time) and until when. */
export interface OutboxLeaseTable {
  name: string;
  owner: string;
  expires_at: Timestamp;
}

/** Version 9: how far each export sink has sent the ledger (a ledger cursor; null: from the start). */
export interface OutboxCursorsTable {
  sink: string;
  after_at: NullableTimestamp;
  after_id: string | null;
  updated_at: Timestamp;
}

export interface Database {
  schema_migrations: SchemaMigrationsTable;
  api_keys: ApiKeysTable;
  key_secrets: KeySecretsTable;
  resources: ResourcesTable;
  audit_log: AuditLogTable;
  ledger: LedgerTable;
  teams: TeamsTable;
  admin_keys: AdminKeysTable;
  admin_key_secrets: KeySecretsTable;
  console_sessions: ConsoleSessionsTable;
  ledger_daily: LedgerDailyTable;
  outbox: OutboxTable;
  outbox_lease: OutboxLeaseTable;
  outbox_cursors: OutboxCursorsTable;
}
