import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { storeMode, type Config } from '../config/index.js';

/** A single Redis or a Cluster: every caller runs its commands and scripts the same way on both. */
export type RedisConnection = Redis | Cluster;

/** What a connection is built from: `config.redis` (cluster node URLs normalised by the schema). */
export type RedisSettings = Pick<Config['redis'], 'url' | 'cluster'>;

export interface ConnectOptions {
  /**
   * ioredis' per-command timeout. The limiter leaves it unset and watches replies itself
   * (ReplyDeadline); writers off the request path may set one.
   */
  readonly commandTimeoutMs?: number;
}

/** Reconnect quickly, then every second at most: a restarted Redis is used again within ~1 s. */
const reconnectDelay = (attempt: number): number => Math.min(50 * attempt, 1000);

/**
 * Options that keep a Redis outage from ever holding a request: commands fail at once while
 * disconnected (no offline queue) and are never retried or resent after a reconnect (a late
 * replay would charge twice). Commands issued in the same tick (concurrent admissions) go out
 * in one write: fewer system calls for the gateway and for Redis, which every instance shares.
 */
function failFastOptions(options: ConnectOptions): RedisOptions {
  return {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2000,
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  };
}

/** Credentials and TLS of a node URL: every node of a Cluster shares the first node's. */
function securityOf(url: URL): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  return {
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls: url.protocol === 'rediss:' ? {} : undefined,
  };
}

/**
 * The one place Redis connections are made: to `redis.cluster` or `redis.url` as the mode
 * says, or none at all in `memory` mode. Reconnects by itself; failures surface on the
 * commands that hit them.
 */
export function connectRedis(settings: RedisSettings, options: ConnectOptions = {}): RedisConnection | undefined {
  const mode = storeMode(settings);
  if (mode === 'memory') return undefined;
  const base = failFastOptions(options);
  let connection: RedisConnection;
  if (mode === 'cluster') {
    const nodes = (settings.cluster ?? []).map((node) => new URL(node));
    connection = new Cluster(
      nodes.map((node) => ({ host: node.hostname, port: node.port ? Number(node.port) : 6379 })),
      {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: reconnectDelay,
        redisOptions: { ...base, ...securityOf(nodes[0]!) },
      },
    );
    // ioredis opens a node's connection on its first command; open it as soon as the node is
    // known, so no request pays the connect (and its ready check) under a reply deadline.
    connection.on('+node', (node: Redis) => void node.connect().catch(() => undefined));
  } else {
    connection = new Redis(settings.url, { ...base, retryStrategy: reconnectDelay });
  }
  // Without a listener ioredis prints every reconnect attempt as an unhandled error.
  connection.on('error', () => undefined);
  return connection;
}

/**
 * Defines a Lua script as a command taking its key count first (`name(numKeys, ...keys, ...args)`).
 * On a Cluster it is left out of auto-pipelining: ioredis picks a command's auto-pipeline by its
 * first argument, which here is the key count, so calls for keys on different masters made in
 * one tick (two teams' admissions) would share one pipeline, which it then refuses whole
 * ("All keys in the pipeline should belong to the same slots allocation group").
 */
export function defineKeyedScript(connection: RedisConnection, name: string, lua: string): void {
  connection.defineCommand(name, { lua });
  if (connection instanceof Cluster) {
    // A new array: the default one is shared by every Cluster of the process.
    connection.options.autoPipeliningIgnoredCommands = [...(connection.options.autoPipeliningIgnoredCommands ?? []), name];
  }
}

/** Whether every connection is up: for a Cluster, the one to each master too. */
export function fullyConnected(connection: RedisConnection): boolean {
  if (connection.status !== 'ready') return false;
  return !(connection instanceof Cluster) || connection.nodes('master').every((node) => node.status === 'ready');
}

/** Resolves true once the connection is ready, or false after `timeoutMs` (start-up waits on it). */
export function whenConnected(connection: RedisConnection, timeoutMs: number): Promise<boolean> {
  if (connection.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean): void => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      resolve(ready);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    connection.on('ready', onReady);
  });
}
