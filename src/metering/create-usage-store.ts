import type { Config } from '../config/index.js';
import type { RedisConnection } from '../redis/index.js';
import { MemoryUsageStore } from './memory-usage-store.js';
import { RedisUsageStore } from './redis-usage-store.js';
import type { UsageStore, UsageStoreEvents, UsageStoreOptions } from './usage-store.js';

/**
 * The Redis usage store on the connection the app made for it (it must not use ioredis' own
 * `keyPrefix`: keys are prefixed here with `config.redis.keyPrefix`), else the in-memory store.
 */
export function createUsageStore(
  config: Config,
  connection: RedisConnection | undefined,
  events: UsageStoreEvents,
  options: UsageStoreOptions = {},
): UsageStore {
  if (connection === undefined) return new MemoryUsageStore();
  return new RedisUsageStore(connection, config.redis.keyPrefix, events, options);
}
