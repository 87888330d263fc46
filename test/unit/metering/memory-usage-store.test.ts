import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { MODEL } from './chat-fixtures.js';
import { buildUsageStore } from './usage-fixtures.js';

const config = configSchema.parse({
  upstreams: { service: { url: 'http://127.0.0.1:9000' }, inference: { url: 'http://127.0.0.1:9001' } },
});

describe('memory usage store', () => {
  it('is the store when no Redis is configured, and counts only whole non-negative numbers', async () => {
    const store = buildUsageStore(config, { onStoreError: () => undefined });
    const base = { day: '2025-06-01', team: 'team-a', project: 'prod', model: MODEL, keyId: 'ci-bot' };
    store.record({ ...base, requests: 1, prompt_tokens: 12.7, completion_tokens: -3, total_tokens: Number.NaN });
    store.record({ ...base, requests: 1, prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 });
    await store.flush();
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01', groupBy: 'key' })).toEqual([
      { team: 'team-a', project: 'prod', key: 'ci-bot', requests: 2, prompt_tokens: 20, completion_tokens: 2, total_tokens: 10 },
    ]);
    await store.close();
  });

  it('keeps records outside the queried days out of the answer', async () => {
    const store = buildUsageStore(config, { onStoreError: () => undefined });
    const base = { team: 'team-a', project: 'prod', model: MODEL, keyId: 'ci-bot', requests: 1, prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    store.record({ ...base, day: '2025-05-31' });
    store.record({ ...base, day: '2025-06-01' });
    store.record({ ...base, day: '2025-06-02' });
    expect(await store.query({ from: '2025-06-01', to: '2025-06-01', groupBy: 'day' })).toEqual([
      { team: 'team-a', project: 'prod', day: '2025-06-01', requests: 1, prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    ]);
  });
});
