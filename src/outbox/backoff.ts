import type { OutboxDelivery, OutboxResult } from '../store/index.js';
import type { SendResult } from './send.js';

/** How failed deliveries are retried (SPEC 24): exponential from `backoffMs`, bounded by `maxBackoffMs`, then `dead`. */
export interface RetryPolicy {
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxAttempts: number;
}

/** The wait after the `attempts`-th failure. */
export function backoffAfter(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(attempts - 1, 30));
}

/** What an attempt leaves on its delivery: delivered; failed with the next try set; or dead after the last allowed attempt. */
export function resultOf(policy: RetryPolicy, delivery: Pick<OutboxDelivery, 'attempts'>, sent: SendResult, nowMs: number): OutboxResult {
  const attempts = delivery.attempts + 1;
  const at = new Date(nowMs).toISOString();
  if (sent.ok) return { state: 'delivered', attempts, nextAt: at, at, status: sent.status, error: null };
  const state = attempts >= policy.maxAttempts ? 'dead' : 'failed';
  return { state, attempts, nextAt: new Date(nowMs + backoffAfter(policy, attempts)).toISOString(), at, status: sent.status, error: sent.error };
}
