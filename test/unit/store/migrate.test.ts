import Sqlite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, LATEST_VERSION, migrate, type Migration, MIGRATIONS, SchemaTooNewError, sqliteDialect } from '../../../src/store/index.js';

const open: Array<Kysely<Database>> = [];
function memoryDb(): Kysely<Database> {
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new Sqlite(':memory:') }) });
  open.push(db);
  return db;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.destroy()));
});

const tableStep = (version: number, table: string): Migration => ({
  version,
  description: `create ${table}`,
  up: async (db) => {
    await sql`create table ${sql.table(table)} (id integer)`.execute(db);
  },
});

describe('migrate', () => {
  it('applies the steps newer than the database, in version order, each recorded once', async () => {
    const db = memoryDb();
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one')])).toEqual([1]);
    expect(await migrate(db, sqliteDialect, [tableStep(2, 'two'), tableStep(1, 'one'), tableStep(3, 'three')])).toEqual([2, 3]);
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(2, 'two'), tableStep(3, 'three')])).toEqual([]);
    const versions = await db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
    expect(versions).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
  });

  it('rolls a failing step back with everything before it in the same run', async () => {
    const db = memoryDb();
    const failing: Migration = { version: 2, description: 'fails', up: () => Promise.reject(new Error('step 2 broke')) };
    await expect(migrate(db, sqliteDialect, [tableStep(1, 'one'), failing])).rejects.toThrow('step 2 broke');
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one')])).toEqual([1]);
  });

  it('refuses a database ahead of the code', async () => {
    const db = memoryDb();
    await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(2, 'two')]);
    await expect(migrate(db, sqliteDialect, [tableStep(1, 'one')])).rejects.toEqual(new SchemaTooNewError(2, 1));
  });

  it('applies a step that arrived after a higher one had run (branches numbered 4 and 5, merged in either order)', async () => {
    const db = memoryDb();
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(3, 'three')])).toEqual([1, 3]);
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(2, 'two'), tableStep(3, 'three')])).toEqual([2]);
    expect(await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(2, 'two'), tableStep(3, 'three')])).toEqual([]);
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name in ('one', 'two', 'three') order by name`.execute(db);
    expect(tables.rows.map((row) => row.name)).toEqual(['one', 'three', 'two']);
  });

  it('refuses a database with a step this code does not know, even one below its newest', async () => {
    const db = memoryDb();
    await migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(2, 'two')]);
    await expect(migrate(db, sqliteDialect, [tableStep(1, 'one'), tableStep(3, 'three')])).rejects.toEqual(new SchemaTooNewError(2, 3));
  });

  it('knows the released steps: versions 1 to LATEST_VERSION, each once, in order', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
  });
});
