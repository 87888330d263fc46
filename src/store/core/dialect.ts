import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/** Column types of the one schema, spelled for each database. */
export interface ColumnTypes {
  /** Text compared as bytes (code points), so ids sort the same on both databases. */
  readonly text: RawBuilder<unknown>;
  readonly timestamp: RawBuilder<unknown>;
  readonly flag: RawBuilder<unknown>;
  readonly json: RawBuilder<unknown>;
  readonly integer: RawBuilder<unknown>;
  readonly bigint: RawBuilder<unknown>;
  /** An integer primary key the database numbers. */
  readonly serial: RawBuilder<unknown>;
  /** `YYYY-MM-DD` of a timestamp column, in UTC (what a migration that sums by day needs). */
  readonly utcDay: (column: string) => RawBuilder<string>;
}

/** The few places where PostgreSQL and SQLite need different SQL; every query is written once around them. */
export interface SqlDialect {
  readonly name: 'postgres' | 'sqlite';
  readonly columns: ColumnTypes;
  /** Opens a write transaction (SQLite: IMMEDIATE, so it waits for the file lock up front, not mid-way). */
  readonly beginWrite: RawBuilder<unknown>;
  /** The driver runs statements on the event loop (better-sqlite3): long reads and deletes go in slices, yielding between them. */
  readonly blocksEventLoop: boolean;
  /** A boolean as the driver can bind it (better-sqlite3 binds no booleans). */
  flag(value: boolean): boolean | number;
  /** `YYYY-MM-DD` of a timestamp column, in UTC. */
  utcDay(column: string): RawBuilder<string>;
  /** `YYYY-MM` of a timestamp column, in UTC. */
  utcMonth(column: string): RawBuilder<string>;
  /** Tells other instances about a change, delivered when the transaction commits (PostgreSQL only). */
  publish(trx: Kysely<Database>, payload: string): Promise<void>;
}

/** The NOTIFY channel every instance listens on. */
export const CHANGE_CHANNEL = 'tollgate_changes';

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  columns: {
    text: sql`text collate "C"`,
    timestamp: sql`timestamptz`,
    flag: sql`boolean`,
    json: sql`jsonb`,
    integer: sql`integer`,
    bigint: sql`bigint`,
    serial: sql`bigserial`,
    utcDay: (column) => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD')`,
  },
  beginWrite: sql`begin`,
  blocksEventLoop: false,
  flag: (value) => value,
  utcDay: (column) => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD')`,
  utcMonth: (column) => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM')`,
  async publish(trx, payload) {
    await sql`select pg_notify(${CHANGE_CHANNEL}, ${payload})`.execute(trx);
  },
};

/** SQLite keeps timestamps as ISO text (`…T…Z`, fixed width): text order is time order, and the day is a prefix. */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  columns: {
    text: sql`text`,
    timestamp: sql`text`,
    flag: sql`integer`,
    json: sql`text`,
    integer: sql`integer`,
    bigint: sql`integer`,
    serial: sql`integer`,
    utcDay: (column) => sql<string>`substr(${sql.ref(column)}, 1, 10)`,
  },
  beginWrite: sql`begin immediate`,
  blocksEventLoop: true,
  flag: (value) => (value ? 1 : 0),
  utcDay: (column) => sql<string>`substr(${sql.ref(column)}, 1, 10)`,
  utcMonth: (column) => sql<string>`substr(${sql.ref(column)}, 1, 7)`,
  publish: () => Promise.resolve(),
};
