import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TcpProxy } from './tcp-proxy.js';

/** The maintenance database of the test server (trust auth); only ever used to create and drop test databases. */
export const MAINTENANCE_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database for one test file, dropped (with its connections) at the end. */
export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Runs SQL in this database on a short-lived connection of its own (inspection, terminating backends). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

function urlOf(database: string): string {
  const url = new URL(MAINTENANCE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onMaintenance(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: MAINTENANCE_URL, application_name: 'tollgate-test-admin' });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Creates `tollgate_test_<random hex>`; never touches any other database. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tollgate_test_${randomBytes(6).toString('hex')}`;
  await onMaintenance(`CREATE DATABASE ${name}`);
  const url = urlOf(name);
  return {
    name,
    url,
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
      const client = new pg.Client({ connectionString: url, application_name: 'tollgate-test-inspect' });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    drop: () => onMaintenance(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Terminates this database's backends with the given application_name; answers how many. */
export async function terminateBackends(database: TestDatabase, applicationName: string): Promise<number> {
  const rows = await database.query<{ terminated: boolean }>(
    'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
    [applicationName],
  );
  return rows.filter((row) => row.terminated).length;
}

/** A breakable relay (TcpProxy) in front of the test server, and `database`'s URL through it. */
export async function relayTo(database: TestDatabase): Promise<{ relay: TcpProxy; url: string }> {
  const url = new URL(database.url);
  const relay = new TcpProxy(url.hostname, Number(url.port || 5432));
  await relay.start();
  url.port = String(relay.port);
  return { relay, url: url.toString() };
}
