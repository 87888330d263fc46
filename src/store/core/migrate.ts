import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';
import { SchemaTooNewError } from './errors.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import type { Database } from './schema.js';

/** Any constant works, as long as every Tollgate uses the same one (pg_advisory_xact_lock key). */
const MIGRATION_LOCK = 7_405_122_093;

/**
 * Brings the schema to the newest version, in one transaction that holds the migration lock
 * (PostgreSQL: an advisory lock; SQLite: BEGIN IMMEDIATE, the file's write lock): instances
 * starting together wait for each other, and the first one to get the lock migrates.
 * Answers the versions applied here. SchemaTooNewError when the database is ahead of the code.
 */
export async function migrate(db: Kysely<Database>, dialect: SqlDialect, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const latest = migrations.reduce((v, m) => Math.max(v, m.version), 0);
  return db.connection().execute(async (conn) => {
    await dialect.beginWrite.execute(conn);
    try {
      if (dialect.name === 'postgres') {
        // A migration may take longer than a request-path call is allowed to.
        await sql`set local statement_timeout = 0`.execute(conn);
        await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK)})`.execute(conn);
      }
      const done = await appliedVersions(conn, dialect);
      // A version this code does not know, even one below its newest, is another Tollgate's schema.
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...done].filter((version) => !known.has(version));
      if (unknown.length > 0) throw new SchemaTooNewError(Math.max(...unknown), latest);
      const applied: number[] = [];
      // By set, not by the highest version: steps numbered by parallel branches (4 and 5 merged
      // after 6 ran) are applied when they arrive, in version order among the missing ones.
      for (const step of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(step.version)) continue;
        await step.up(conn, dialect.columns);
        await conn.insertInto('schema_migrations').values({ version: step.version, applied_at: new Date().toISOString() }).execute();
        applied.push(step.version);
      }
      await sql`commit`.execute(conn);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}

async function appliedVersions(db: Kysely<Database>, dialect: SqlDialect): Promise<Set<number>> {
  await db.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', dialect.columns.integer, (col) => col.primaryKey())
    .addColumn('applied_at', dialect.columns.timestamp, (col) => col.notNull())
    .execute();
  const rows = await db.selectFrom('schema_migrations').select('version').execute();
  return new Set(rows.map((row) => Number(row.version)));
}
