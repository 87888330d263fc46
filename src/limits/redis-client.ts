import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/index.js';

/** A single Redis or a Cluster: both run the limiter's scripts the same way. */
export type RedisConnection = Redis | Cluster;

/** Reconnect quickly, then every second at most: a restarted Redis is used again within ~1 s. */
const reconnectDelay = (attempt: number): number => Math.min(50 * attempt, 1000);

/**
 * Options that keep a Redis outage from ever holding a request: commands fail at once while
 * disconnected (no offline queue), fail after `commandTimeoutMs` when Redis hangs, and are
 * never retried or resent after a reconnect (a late replay would charge twice).
 */
function failFastOptions(redis: Config['redis']): RedisOptions {
  return {
    commandTimeout: redis.commandTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2000,
  };
}

function nodeOf(url: string): { host: string; port: number } {
  const parsed = new URL(url.includes('://') ? url : `redis://${url}`);
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : 6379 };
}

/** Connects to `redis.cluster` when set, else to `redis.url`; reconnects by itself. */
export function connectRedis(redis: Config['redis']): RedisConnection {
  const options = failFastOptions(redis);
  let connection: RedisConnection;
  if (redis.cluster && redis.cluster.length > 0) {
    const first = new URL(redis.cluster[0]!.includes('://') ? redis.cluster[0]! : `redis://${redis.cluster[0]!}`);
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
  } else {
    connection = new Redis(redis.url, { ...options, enableOfflineQueue: false, retryStrategy: reconnectDelay });
  }
  // Failures surface on the commands that hit them; without a listener ioredis prints every
  // reconnect attempt as an unhandled error.
  connection.on('error', () => undefined);
  return connection;
}
