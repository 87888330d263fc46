import { GatewayError } from '../errors.js';
import { formatGoDuration, rateLimitHeaders, wholeSeconds } from './headers.js';
import type { Check, Outcome } from './store.js';

/** A slot frees when some request ends; there is no window to wait for, so suggest a short retry. */
const CONCURRENCY_RETRY_MS = 1000;

/** A refused admission: the check to report and the 429 to answer with. */
export interface Rejection {
  readonly check: Check;
  readonly error: GatewayError;
}

/**
 * Builds the 429 for a refused admission. When several limits refuse, the one that frees last
 * is reported, so `Retry-After` is a time at which every one of them can pass again.
 */
export function rejectionFor(checks: readonly Check[], outcome: Outcome): Rejection {
  let worst = -1;
  let worstWaitMs = -1;
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    if (check.cost === 0 || outcome.used[i]! + check.cost <= check.max) continue;
    const waitMs = check.windowMs === 0 ? CONCURRENCY_RETRY_MS : outcome.resetMs[i]!;
    if (waitMs > worstWaitMs) {
      worst = i;
      worstWaitMs = waitMs;
    }
  }
  if (worst < 0) worst = 0; // unreachable while stores and this rule agree; never crash on it
  const check = checks[worst]!;
  const retryAfter = wholeSeconds(worstWaitMs);
  const headers = rateLimitHeaders(checks, outcome.used, outcome.resetMs);
  headers['retry-after'] = String(retryAfter);
  const code = check.limit === 'tokensPerDay' ? 'insufficient_quota' : 'rate_limit_exceeded';
  return { check, error: new GatewayError(429, code, messageFor(check, outcome.used[worst]!, retryAfter), headers) };
}

function messageFor(check: Check, used: number, retryAfterSeconds: number): string {
  const retry = `retry in ${formatGoDuration(retryAfterSeconds * 1000)}.`;
  const on = `on ${check.subject}`;
  switch (check.limit) {
    case 'rpm':
      return `Rate limit reached for requests per minute (rpm) ${on}: limit ${check.max}, ${retry}`;
    case 'concurrency':
      return `Concurrency limit reached ${on}: limit ${check.max} requests in flight, ${retry}`;
    case 'tpm':
      if (check.cost > check.max) {
        return `Request too large for tokens per minute (tpm) ${on}: limit ${check.max}, requested ${check.cost}. Lower max_tokens or shorten the messages.`;
      }
      return `Rate limit reached for tokens per minute (tpm) ${on}: limit ${check.max}, used ${used}, requested ${check.cost}, ${retry}`;
    case 'tokensPerDay':
      return `Daily token budget (tokensPerDay) exhausted ${on}: limit ${check.max}, used ${used}, requested ${check.cost}, ${retry}`;
  }
}
