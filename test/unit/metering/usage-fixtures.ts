import { configSchema, type ConfigInput } from '../../../src/config/schema.js';
import type { Config } from '../../../src/config/index.js';
import { createUsageStore, type UsageQuery, type UsageRecord, type UsageStore, type UsageStoreEvents, type UsageStoreOptions } from '../../../src/metering/index.js';
import { connectRedis } from '../../../src/redis/index.js';
import { MODEL } from './chat-fixtures.js';

export { MODEL };
export const BASE_MODEL = 'Qwen/Qwen3-8B';

/** A config for the usage store: `redis` as given, everything else default. */
export function usageConfig(redis: ConfigInput['redis'] = {}): Config {
  return configSchema.parse({
    upstreams: { service: { url: 'http://127.0.0.1:9000' }, inference: { url: 'http://127.0.0.1:9001' } },
    redis,
  });
}

/**
 * A usage store built the way the app builds one: the store the config's mode asks for, on a
 * Redis connection of its own (with the app's usage command timeout), closed with the store.
 */
export function buildUsageStore(config: Config, events: UsageStoreEvents, options: UsageStoreOptions = {}): UsageStore {
  const connection = connectRedis(config.redis, { commandTimeoutMs: 2000 });
  const store = createUsageStore(config, connection, events, options);
  return {
    record: (r) => store.record(r),
    query: (q) => store.query(q),
    flush: () => store.flush(),
    async close() {
      await store.close();
      connection?.disconnect();
    },
  };
}

export const usage = (over: Partial<UsageRecord>): UsageRecord => ({
  day: '2025-06-01',
  team: 'team-a',
  project: 'prod',
  model: MODEL,
  keyId: 'ci-bot',
  requests: 1,
  prompt_tokens: 25,
  completion_tokens: 3,
  total_tokens: 28,
  ...over,
});

/** Traffic over three days, two teams, three projects, two models, three keys. */
export const TRAFFIC: readonly UsageRecord[] = [
  usage({}),
  usage({}),
  usage({ model: BASE_MODEL, prompt_tokens: 400, completion_tokens: 120, total_tokens: 520 }),
  usage({ keyId: 'jwt:alice@acme.io', prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 }),
  usage({ project: 'dev', keyId: 'jwt:alice@acme.io', prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 }),
  usage({ day: '2025-06-02', model: BASE_MODEL, prompt_tokens: 1000, completion_tokens: 2000, total_tokens: 3000 }),
  usage({ day: '2025-06-02', team: 'team-b', project: 'research', keyId: 'notebook' }),
  usage({ day: '2025-06-03', team: 'team-b', project: 'research', keyId: 'notebook', requests: 1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
  usage({ day: '2025-05-31', prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 }),
];

/** Queries that between them use every groupBy and filter. */
export const QUERIES: readonly UsageQuery[] = [
  { from: '2025-06-01', to: '2025-06-03' },
  { from: '2025-05-01', to: '2025-06-30', groupBy: 'model' },
  { from: '2025-05-01', to: '2025-06-30', groupBy: 'key' },
  { from: '2025-05-01', to: '2025-06-30', groupBy: 'day' },
  { from: '2025-06-01', to: '2025-06-02', team: 'team-a', groupBy: 'model' },
  { from: '2025-06-01', to: '2025-06-03', project: 'research', groupBy: 'day' },
  { from: '2025-06-01', to: '2025-06-01', team: 'team-a', project: 'dev', groupBy: 'key' },
  { from: '2025-06-04', to: '2025-06-30' },
];
