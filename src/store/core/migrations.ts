import { sql, type Kysely } from 'kysely';
import { postgresDialect, type ColumnTypes } from './dialect.js';
import type { Database } from './schema.js';

/**
 * The schema's history. A step is never edited once released: a change is a new step with the
 * next version. Each runs inside the migration transaction (so no CREATE INDEX CONCURRENTLY).
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  up(db: Kysely<Database>, columns: ColumnTypes): Promise<void>;
}

async function createKeyTables(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', c.text, (col) => col.primaryKey())
    .addColumn('team', c.text, (col) => col.notNull())
    .addColumn('projects', c.json, (col) => col.notNull())
    .addColumn('default_project', c.text, (col) => col.notNull())
    .addColumn('limits', c.json, (col) => col.notNull())
    .addColumn('description', c.text)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('expires_at', c.timestamp)
    .addColumn('disabled', c.flag, (col) => col.notNull())
    .addColumn('revoked_at', c.timestamp)
    .execute();
  await db.schema.createIndex('api_keys_team').on('api_keys').columns(['team', 'created_at']).execute();
  // The digest is the primary key: globally unique, and one index lookup per authentication.
  await db.schema
    .createTable('key_secrets')
    .addColumn('sha256', c.text, (col) => col.primaryKey())
    .addColumn('key_id', c.text, (col) => col.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('valid_until', c.timestamp)
    .execute();
  await db.schema.createIndex('key_secrets_key').on('key_secrets').column('key_id').execute();
  // At most one current secret per key, whatever two concurrent rotations do.
  await db.schema.createIndex('key_secrets_one_current').on('key_secrets').column('key_id').unique().where(sql.ref('valid_until'), 'is', null).execute();
}

async function createResources(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('resources')
    .addColumn('kind', c.text, (col) => col.notNull().check(sql`kind in ('model', 'training_job')`))
    .addColumn('id', c.text, (col) => col.notNull())
    .addColumn('team', c.text, (col) => col.notNull())
    .addColumn('project', c.text, (col) => col.notNull())
    .addColumn('artifact', c.text)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addPrimaryKeyConstraint('resources_pk', ['kind', 'id'])
    .execute();
  // The name_in_use check looks models up by artifact before one is created.
  await db.schema.createIndex('resources_artifact').on('resources').column('artifact').where('artifact', 'is not', null).execute();
  await db.schema.createIndex('resources_owner').on('resources').columns(['team', 'project']).execute();
}

async function createAuditLog(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', c.serial, (col) => col.primaryKey())
    .addColumn('at', c.timestamp, (col) => col.notNull())
    .addColumn('actor', c.text, (col) => col.notNull())
    .addColumn('action', c.text, (col) => col.notNull())
    .addColumn('target', c.text, (col) => col.notNull())
    .addColumn('result', c.text, (col) => col.notNull())
    .addColumn('request_id', c.text, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at', 'id']).execute();
}

async function createLedger(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('ledger')
    // The request id is the key: a retried batch inserts nothing twice (ON CONFLICT DO NOTHING).
    .addColumn('request_id', c.text, (col) => col.primaryKey())
    .addColumn('at', c.timestamp, (col) => col.notNull())
    .addColumn('team', c.text, (col) => col.notNull())
    .addColumn('project', c.text, (col) => col.notNull())
    .addColumn('key_id', c.text, (col) => col.notNull())
    .addColumn('route', c.text, (col) => col.notNull())
    .addColumn('method', c.text, (col) => col.notNull())
    .addColumn('status', c.integer, (col) => col.notNull())
    .addColumn('model', c.text, (col) => col.notNull())
    .addColumn('prompt_tokens', c.integer, (col) => col.notNull())
    .addColumn('completion_tokens', c.integer, (col) => col.notNull())
    .addColumn('total_tokens', c.integer, (col) => col.notNull())
    .addColumn('cost_nanos', c.bigint, (col) => col.notNull())
    .addColumn('estimated', c.flag, (col) => col.notNull())
    .addColumn('request_bytes', c.bigint, (col) => col.notNull())
    .addColumn('duration_ms', c.integer, (col) => col.notNull())
    .execute();
  // Time order for paging everything and for retention; then one per filter the admin API
  // offers, each ending in (at, request_id) so a filtered page is one ordered index range.
  await db.schema.createIndex('ledger_at').on('ledger').columns(['at', 'request_id']).execute();
  await db.schema.createIndex('ledger_team_at').on('ledger').columns(['team', 'at', 'request_id']).execute();
  await db.schema.createIndex('ledger_key_at').on('ledger').columns(['key_id', 'at', 'request_id']).execute();
}

/** The ledger's columns in version 1: all of version 2's but `id`. */
const LEDGER_V1_COLUMNS = [
  'request_id', 'at', 'team', 'project', 'key_id', 'route', 'method', 'status', 'model',
  'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos', 'estimated', 'request_bytes', 'duration_ms',
] as const;

/**
 * Version 2 (SPEC 14.1): a row is keyed by an id the gateway makes per request, not by the
 * client's x-request-id, which requests may share. SQLite cannot change a primary key in place,
 * so the table is rebuilt (the same on both databases). A row kept from version 1 takes its
 * request id — unique until now — as its id, so a cursor handed out before still points at it.
 */
async function keyLedgerByRowId(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('ledger_next')
    .addColumn('id', c.text, (col) => col.notNull())
    .addColumn('request_id', c.text, (col) => col.notNull())
    .addColumn('at', c.timestamp, (col) => col.notNull())
    .addColumn('team', c.text, (col) => col.notNull())
    .addColumn('project', c.text, (col) => col.notNull())
    .addColumn('key_id', c.text, (col) => col.notNull())
    .addColumn('route', c.text, (col) => col.notNull())
    .addColumn('method', c.text, (col) => col.notNull())
    .addColumn('status', c.integer, (col) => col.notNull())
    .addColumn('model', c.text, (col) => col.notNull())
    .addColumn('prompt_tokens', c.integer, (col) => col.notNull())
    .addColumn('completion_tokens', c.integer, (col) => col.notNull())
    .addColumn('total_tokens', c.integer, (col) => col.notNull())
    .addColumn('cost_nanos', c.bigint, (col) => col.notNull())
    .addColumn('estimated', c.flag, (col) => col.notNull())
    .addColumn('request_bytes', c.bigint, (col) => col.notNull())
    .addColumn('duration_ms', c.integer, (col) => col.notNull())
    // The key makes a retried batch insert nothing twice (ON CONFLICT (id) DO NOTHING).
    .addPrimaryKeyConstraint('ledger_row_id', ['id'])
    .execute();
  const columns = sql.join(LEDGER_V1_COLUMNS.map((column) => sql.ref(column)));
  await sql`insert into ledger_next (id, ${columns}) select request_id, ${columns} from ledger`.execute(db);
  await db.schema.dropTable('ledger').execute();
  await db.schema.alterTable('ledger_next').renameTo('ledger').execute();
  // As in version 1, each index ends in the page order, now (at, id).
  await db.schema.createIndex('ledger_at').on('ledger').columns(['at', 'id']).execute();
  await db.schema.createIndex('ledger_team_at').on('ledger').columns(['team', 'at', 'id']).execute();
  await db.schema.createIndex('ledger_key_at').on('ledger').columns(['key_id', 'at', 'id']).execute();
}

/**
 * Version 3 (SPEC 16): team records, admin keys made at runtime (their secrets as digests, as
 * for API keys) and the role of the admin key behind each audit entry.
 */
async function addTeamsAndAdminKeys(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('teams')
    .addColumn('id', c.text, (col) => col.primaryKey())
    .addColumn('description', c.text)
    .addColumn('limits', c.json, (col) => col.notNull())
    .addColumn('disabled', c.flag, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('admin_keys')
    .addColumn('id', c.text, (col) => col.primaryKey())
    .addColumn('role', c.text, (col) => col.notNull().check(sql`role in ('admin', 'viewer', 'team-admin')`))
    .addColumn('team', c.text)
    .addColumn('description', c.text)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('expires_at', c.timestamp)
    .addColumn('disabled', c.flag, (col) => col.notNull())
    .addColumn('revoked_at', c.timestamp)
    .execute();
  await db.schema
    .createTable('admin_key_secrets')
    .addColumn('sha256', c.text, (col) => col.primaryKey())
    .addColumn('key_id', c.text, (col) => col.notNull().references('admin_keys.id').onDelete('cascade'))
    .addColumn('valid_until', c.timestamp)
    .execute();
  await db.schema.createIndex('admin_key_secrets_key').on('admin_key_secrets').column('key_id').execute();
  await db.schema
    .createIndex('admin_key_secrets_one_current')
    .on('admin_key_secrets')
    .column('key_id')
    .unique()
    .where(sql.ref('valid_until'), 'is', null)
    .execute();
  await db.schema.alterTable('audit_log').addColumn('actor_role', c.text).execute();
}

/**
 * Version 4 (SPEC 20): a resource may be of any kind a config route names (`run`, `operation`),
 * not only `model` and `training_job`: the check on `kind` goes (kinds are validated in the
 * configuration instead). SQLite cannot drop a constraint, so the table is rebuilt — the same
 * on both databases, as version 2 did; the primary key takes a new name, since on PostgreSQL
 * the old table's index holds the old one until it is dropped.
 */
async function freeResourceKinds(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('resources_next')
    .addColumn('kind', c.text, (col) => col.notNull())
    .addColumn('id', c.text, (col) => col.notNull())
    .addColumn('team', c.text, (col) => col.notNull())
    .addColumn('project', c.text, (col) => col.notNull())
    .addColumn('artifact', c.text)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addPrimaryKeyConstraint('resources_kind_id', ['kind', 'id'])
    .execute();
  await sql`insert into resources_next (kind, id, team, project, artifact, created_at) select kind, id, team, project, artifact, created_at from resources`.execute(db);
  await db.schema.dropTable('resources').execute();
  await db.schema.alterTable('resources_next').renameTo('resources').execute();
  await db.schema.createIndex('resources_artifact').on('resources').column('artifact').where('artifact', 'is not', null).execute();
  await db.schema.createIndex('resources_owner').on('resources').columns(['team', 'project']).execute();
}

/**
 * Version 5 (SPEC 18): the trace of each ledger row's request, null when tracing was off. Only
 * adds a nullable column, so it applies in any order with the steps around it (versions 4 and 5
 * were written side by side; the runner applies whichever a database lacks).
 */
async function addLedgerTraceId(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('trace_id', c.text).execute();
}

/**
 * Version 6 (SPEC 17): console sessions. A row per signed-in browser, keyed by the digest of the
 * cookie's token (a copy of the table signs no one in), so every instance sharing the database
 * knows a session and a sign-out ends it everywhere. Versions 4 and 5 are other branches' steps;
 * the runner applies whichever are missing, in order.
 */
async function addConsoleSessions(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('token_sha256', c.text, (col) => col.primaryKey())
    .addColumn('admin_key_id', c.text, (col) => col.notNull())
    .addColumn('csrf_token', c.text, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('expires_at', c.timestamp, (col) => col.notNull())
    .execute();
  // Each sign-in deletes the expired ones: a range of this index.
  await db.schema.createIndex('console_sessions_expires').on('console_sessions').column('expires_at').execute();
  await addLedgerDaily(db, c);
}

/** The columns a day of the ledger is summed by (ledger_daily's key). */
const DAILY_KEY = ['day', 'team', 'project', 'key_id', 'model', 'method', 'route'] as const;

/**
 * Also version 6: the ledger summed per UTC day (SPEC 17: the console's usage and overview
 * reads within 1 s at 1,000,000 rows, where summing the rows themselves took 2 s), filled from
 * the rows already there.
 */
async function addLedgerDaily(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  let table = db.schema.createTable('ledger_daily');
  for (const column of DAILY_KEY) table = table.addColumn(column, c.text, (col) => col.notNull());
  for (const column of ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos']) table = table.addColumn(column, c.bigint, (col) => col.notNull());
  await table.addPrimaryKeyConstraint('ledger_daily_pk', [...DAILY_KEY] as never).execute();
  await db.schema.createIndex('ledger_daily_team').on('ledger_daily').columns(['team', 'day']).execute();
  await db.schema.createIndex('ledger_daily_key').on('ledger_daily').columns(['key_id', 'day']).execute();
  const day = c.utcDay('at');
  await sql`insert into ledger_daily (day, team, project, key_id, model, method, route, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
    select ${day}, team, project, key_id, model, method, route, count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
    from ledger group by ${day}, team, project, key_id, model, method, route`.execute(db);
}

/**
 * Version 7 (SPEC 21): a key's and a team's own model patterns (JSON list; null: none of their
 * own). Only adds nullable columns, so it applies in any order with other branches' steps.
 */
async function addModelLists(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('models', c.json).execute();
  await db.schema.alterTable('teams').addColumn('models', c.json).execute();
}

/**
 * Version 8 (SPEC 22): the model name a client sent when another served it (an alias, a
 * fallback), and the model a fallback replaced. Nullable columns only: applies in any order.
 */
async function addLedgerModelRouting(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('requested_model', c.text).execute();
  await db.schema.alterTable('ledger').addColumn('fallback_from', c.text).execute();
}

/**
 * Version 9 (SPEC 24): the notification outbox (a row per event and sink, keyed so a second
 * publish inserts nothing), the deliverer's lease, and each export sink's ledger cursor.
 */
async function addOutbox(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('id', c.text, (col) => col.primaryKey())
    .addColumn('sink', c.text, (col) => col.notNull())
    .addColumn('event_id', c.text, (col) => col.notNull())
    .addColumn('type', c.text, (col) => col.notNull())
    .addColumn('team', c.text)
    .addColumn('payload', c.json, (col) => col.notNull())
    .addColumn('state', c.text, (col) => col.notNull())
    .addColumn('attempts', c.integer, (col) => col.notNull())
    .addColumn('next_at', c.timestamp, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .addColumn('last_status', c.integer)
    .addColumn('last_error', c.text)
    .execute();
  await db.schema.createIndex('outbox_due').on('outbox').columns(['state', 'next_at']).execute();
  await db.schema.createIndex('outbox_listing').on('outbox').columns(['created_at', 'id']).execute();
  await db.schema
    .createTable('outbox_lease')
    .addColumn('name', c.text, (col) => col.primaryKey())
    .addColumn('owner', c.text, (col) => col.notNull())
    .addColumn('expires_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('outbox_cursors')
    .addColumn('sink', c.text, (col) => col.primaryKey())
    .addColumn('after_at', c.timestamp)
    .addColumn('after_id', c.text)
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  // Export cursors follow the order rows were written (export-queries.ts): SQLite's rowid is that
  // order already; PostgreSQL stamps each row with its transaction's start, by the database's clock
  // (to the millisecond, as the cursor holds it).
  if (c === postgresDialect.columns) {
    await sql`alter table ledger add column written_at timestamptz not null default date_trunc('milliseconds', now())`.execute(db);
    await db.schema.createIndex('ledger_written').on('ledger').columns(['written_at', 'id']).execute();
  }
}

/**
 * Version 10 (SPEC 25): the person behind a console session signed in through the identity
 * provider (JSON: sub, email, name, role, team; null for a key's session), and the email of an
 * audit entry's actor. Only adds nullable columns, so it applies in any order with other branches' steps.
 */
async function addConsolePeople(db: Kysely<Database>, c: ColumnTypes): Promise<void> {
  await db.schema.alterTable('console_sessions').addColumn('person', c.text).execute();
  await db.schema.alterTable('audit_log').addColumn('actor_email', c.text).execute();
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'keys, resources, audit log, usage ledger',
    async up(db, columns) {
      await createKeyTables(db, columns);
      await createResources(db, columns);
      await createAuditLog(db, columns);
      await createLedger(db, columns);
    },
  },
  {
    version: 2,
    description: 'ledger rows keyed by a gateway-made id; request_id no longer unique',
    up: keyLedgerByRowId,
  },
  {
    version: 3,
    description: 'teams, admin keys made at runtime, the actor role of audit entries',
    up: addTeamsAndAdminKeys,
  },
  {
    version: 4,
    description: 'resources of any kind (config routes name their own kinds)',
    up: freeResourceKinds,
  },
  {
    version: 5,
    description: 'the trace id of each ledger row',
    up: addLedgerTraceId,
  },
  {
    version: 6,
    description: 'console sessions; the ledger summed per day',
    up: addConsoleSessions,
  },
  {
    version: 7,
    description: 'model patterns of keys and teams',
    up: addModelLists,
  },
  {
    version: 8,
    description: 'requested model and fallback of each ledger row',
    up: addLedgerModelRouting,
  },
  {
    version: 9,
    description: 'notification outbox, its lease, export cursors',
    up: addOutbox,
  },
  {
    version: 10,
    description: 'the person of a console session signed in through the identity provider; the actor email of audit entries',
    up: addConsolePeople,
  },
];

/** The newest schema this code knows. */
export const LATEST_VERSION = MIGRATIONS.reduce((latest, m) => Math.max(latest, m.version), 0);
