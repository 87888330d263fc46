import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { timeLeft } from '../core/deadline.js';
import { DatabaseUnavailableError } from '../core/errors.js';
import type { StoreLogger } from '../core/logger.js';

export interface PostgresPoolSettings {
  readonly url: string;
  readonly poolSize: number;
  readonly timeoutMs: number;
  /** Shown in pg_stat_activity, so an operator (or a test) can tell Tollgate's connections apart. */
  readonly applicationName: string;
}

/**
 * SQLSTATE classes that mean "the database cannot answer now", not "the query is wrong":
 * connection exceptions, insufficient resources, operator intervention (shutdown, terminated
 * backend, statement timeout), system errors, authentication, missing database.
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58', '28', '3D']);

/** Server errors keep their own type unless they say the database is unavailable; client-side failures always do. */
export function postgresFailure(error: unknown): Error {
  if (error instanceof DatabaseUnavailableError) return error;
  if (error instanceof pg.DatabaseError && !UNAVAILABLE_CLASSES.has(error.code?.slice(0, 2) ?? '')) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new DatabaseUnavailableError(`PostgreSQL is unavailable: ${reason}`, { cause: error });
}

/**
 * A pg pool whose waits are bounded: connecting (connectionTimeoutMillis) and every statement
 * on the server (statement_timeout). Broken connections are dropped and replaced on demand,
 * so the pool recovers by itself once the server is back.
 */
export function createPostgresPool(settings: PostgresPoolSettings, logger: StoreLogger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.timeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: settings.timeoutMs,
    application_name: settings.applicationName,
    keepAlive: true,
  });
  // An idle connection that dies (server restart, pg_terminate_backend) is reported here, then removed.
  pool.on('error', (error) => logger.warn({ err: error.message }, 'idle PostgreSQL connection lost; the pool replaces it'));
  // A connection that dies while checked out also emits 'error' on the client, which pg-pool
  // does not listen to then: without this listener the process would crash. The running query
  // rejects with the same failure, and the connection is dropped when released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The pool as Kysely sees it: connections whose statements keep to the current call's deadline. */
export class DeadlinePool implements PostgresPool {
  constructor(private readonly pool: pg.Pool) {}

  async connect(): Promise<PostgresPoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw postgresFailure(error);
    }
    // The caller gave up while waiting for a connection: hand it back intact, unused.
    const left = timeLeft();
    if (left.ms <= 0) {
      client.release();
      throw left.error();
    }
    return new DeadlineClient(client);
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * One checked-out connection. A statement that outlives the call's deadline, or fails below
 * SQL (network, terminated backend), marks the connection broken: released, it is destroyed
 * rather than handed to the next caller in an unknown state (e.g. mid-transaction).
 */
class DeadlineClient implements PostgresPoolClient {
  private broken: Error | undefined;

  constructor(private readonly client: pg.PoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(statement: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof statement !== 'string') throw new Error('the durable store does not stream with cursors');
    return this.run<R>(statement, parameters);
  }

  private run<R>(statement: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    const left = timeLeft();
    if (left.ms <= 0) {
      this.broken ??= new Error('call ran out of time before this statement');
      return Promise.reject(left.error());
    }
    return new Promise((resolve, reject) => {
      const timer = Number.isFinite(left.ms)
        ? setTimeout(() => {
            this.broken ??= new Error('statement outlived its call');
            reject(left.error());
          }, left.ms)
        : undefined;
      this.client.query(statement, [...parameters]).then(
        (result) => {
          clearTimeout(timer);
          resolve(result as unknown as PostgresQueryResult<R>);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!(error instanceof pg.DatabaseError)) this.broken ??= error instanceof Error ? error : new Error(String(error));
          reject(postgresFailure(error));
        },
      );
    });
  }

  release(): void {
    this.client.release(this.broken);
  }
}
