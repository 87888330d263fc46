import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/index.js';

/** A single Redis or a Cluster: both run the limiter's scripts the same way. */
export type RedisConnection = Redis | Cluster;

/** Reconnect quickly, then every second at most: a restarted Redis is used again within ~1 s. */
const reconnectDelay = (attempt: number): number => Math.min(50 * attempt, 1000);

/**
 * Options that keep a Redis outage from ever holding a request: commands fail at once while
 * disconnected (no offline queue) and are never retried or resent after a reconnect (a late
 * replay would charge twice). A Redis that hangs is caught by ReplyDeadline, not by ioredis'
 * per-command `commandTimeout`, which would also fire on a healthy Redis working through a burst.
 */
function failFastOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2000,
  };
}

/** Cluster nodes may be written as URLs or as bare `host:port`. */
const parseNodeUrl = (url: string): URL => new URL(url.includes('://') ? url : `redis://${url}`);

function nodeOf(url: string): { host: string; port: number } {
  const parsed = parseNodeUrl(url);
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : 6379 };
}

/** Whether every connection the store needs is up: for a Cluster, the one to each master too. */
export function fullyConnected(connection: RedisConnection): boolean {
  if (connection.status !== 'ready') return false;
  return !(connection instanceof Cluster) || connection.nodes('master').every((node) => node.status === 'ready');
}

/** Connects to `redis.cluster` when set, else to `redis.url`; reconnects by itself. */
export function connectRedis(redis: Config['redis']): RedisConnection {
  const options = failFastOptions();
  let connection: RedisConnection;
  if (redis.cluster && redis.cluster.length > 0) {
    // Credentials and TLS come from the first node's URL and apply to every node.
    const first = parseNodeUrl(redis.cluster[0]!);
    connection = new Cluster(redis.cluster.map(nodeOf), {
      enableOfflineQueue: false,
      clusterRetryStrategy: reconnectDelay,
      redisOptions: {
        ...options,
        username: first.username ? decodeURIComponent(first.username) : undefined,
        password: first.password ? decodeURIComponent(first.password) : undefined,
        tls: first.protocol === 'rediss:' ? {} : undefined,
      },
    });
    // ioredis opens a node's connection on its first command; open it as soon as the node is
    // known, so no request pays the connect (and its ready check) under the reply deadline.
    connection.on('+node', (node: Redis) => void node.connect().catch(() => undefined));
  } else {
    connection = new Redis(redis.url, { ...options, enableOfflineQueue: false, retryStrategy: reconnectDelay });
  }
  // Failures surface on the commands that hit them; without a listener ioredis prints every
  // reconnect attempt as an unhandled error.
  connection.on('error', () => undefined);
  return connection;
}
