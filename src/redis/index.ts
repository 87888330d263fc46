/** Redis connections (single node or Cluster), built in one place for every store that uses Redis. */
export { connectRedis, defineKeyedScript, fullyConnected, whenConnected, type ConnectOptions, type RedisConnection, type RedisSettings } from './connection.js';
export { ReplyDeadline } from './reply-deadline.js';
