/**
 * Rate limits (SPEC 6.3): the kinds of the limits table (rpm, tpm, a daily token budget,
 * concurrency), per principal and per team/project, checked and charged atomically in one
 * store (memory, Redis or Redis Cluster), with OpenAI-style and IETF rate-limit headers.
 */
import type { Config } from '../config/index.js';
import type { RedisConnection } from '../redis/index.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { LimitStore } from './store.js';

export { createLimiter } from './limiter.js';
export type { Admission, AdmissionRequest, Limiter, LimitEvents, Reserve } from './limiter.js';
export type { AlertScope, LimitScope, LimitStore, ScopeReading } from './store.js';
/** What the limiter publishes budget alerts to (the outbox's contract, SPEC 24). */
export type { EventSink, NotificationEvent } from '../outbox/index.js';
export type { CounterName, LimitName, LimitSet } from '../limit-kinds/index.js';
export { configuredLimits, counterLimit, isBudget, limitKind, LIMIT_KINDS } from '../limit-kinds/index.js';
export type { TeamLimitSource } from './plan.js';
export { formatGoDuration } from '../duration.js';

/**
 * The store limits live in: Redis when the app made a connection for them (`redis.mode` is not
 * `memory`), else this instance's memory.
 */
export function createLimitStore(config: Pick<Config, 'redis' | 'rateLimits'>, connection: RedisConnection | undefined, onBackgroundError: () => void): LimitStore {
  if (connection === undefined) return new MemoryStore();
  return new RedisStore(connection, {
    replySilenceMs: config.redis.commandTimeoutMs,
    leaseTtlMs: config.rateLimits.concurrencyLeaseMs,
    onBackgroundError,
  });
}
export { type ScopeNumbers, decodeScopeNumbers } from './redis-scripts.js';
export { RedisStore } from './redis-store.js';
export { type Check, type Outcome, StoreUnavailableError, isInflight, refuses } from './store.js';
export { LimitPlan } from './plan.js';
export { BudgetAlerts } from './alerts.js';
export { MemoryStore } from './memory-store.js';
export { rateLimitHeaders } from './headers.js';
export { rejectionFor } from './rejection.js';
