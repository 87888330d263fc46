/**
 * Rate limits (SPEC 6.3): rpm, tpm, concurrency and a daily token budget, per principal and
 * per team/project, checked and charged atomically in one store (memory, Redis or Redis
 * Cluster), with OpenAI-style and IETF rate-limit headers.
 */
export { createLimiter } from './limiter.js';
export type { Admission, AdmissionRequest, Limiter, LimiterOptions, LimitEvents } from './limiter.js';
export type { LimitName, LimitScope } from './store.js';
export { formatGoDuration } from './headers.js';
