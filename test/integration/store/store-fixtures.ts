import type { ApiKeyRecord, DurableStore, LedgerRow, ResourceRecord, StoreChange } from '../../../src/store/index.js';

/** The digest of a made-up secret, as the gateway would store it (test/helpers/keys.ts). */
export { digest } from '../../helpers/keys.js';

export function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: 'key-1',
    team: 'team-a',
    projects: ['default', 'prod'],
    defaultProject: 'default',
    limits: { rpm: 60, costPerDay: 2.5 },
    models: null,
    description: 'ci bot',
    createdAt: '2025-03-01T10:00:00.000Z',
    expiresAt: null,
    disabled: false,
    revokedAt: null,
    ...overrides,
  };
}

export function resource(overrides: Partial<ResourceRecord> = {}): ResourceRecord {
  return { kind: 'model', id: 'model-1', team: 'team-a', project: 'prod', artifact: 'acme/prod/qwen-ft', createdAt: '2025-03-01T10:00:00.000Z', ...overrides };
}

/** A ledger row; its gateway-made `id` defaults to one derived from its request id (tests of shared request ids give their own). */
export function ledgerRow(overrides: Partial<LedgerRow> = {}): LedgerRow {
  return {
    id: `row-${overrides.requestId ?? 'req-1'}`,
    requestId: 'req-1',
    at: '2025-01-15T12:00:00.000Z',
    team: 'team-a',
    project: 'prod',
    keyId: 'key-1',
    route: '/v1/chat/completions',
    method: 'POST',
    status: 200,
    model: 'OpenPipe/Qwen3-14B-Instruct',
    promptTokens: 100,
    completionTokens: 20,
    totalTokens: 120,
    costNanos: 9_400,
    estimated: false,
    requestBytes: 512,
    durationMs: 35,
    traceId: null,
    requestedModel: null,
    fallbackFrom: null,
    ...overrides,
  };
}

/** Collects what a store's change feed says, and waits for a given count. */
export class ChangeRecorder {
  readonly changes: StoreChange[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  readonly unsubscribe: () => void;

  constructor(store: DurableStore) {
    this.unsubscribe = store.onChange((change) => {
      this.changes.push(change);
      this.waiters = this.waiters.filter((w) => (this.changes.length >= w.count ? (w.resolve(), false) : true));
    });
  }

  /** Resolves once `count` changes have arrived in total; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 5000): Promise<void> {
    if (this.changes.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${this.changes.length} of ${count} changes within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}

/** The rejection of a promise that must reject (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
