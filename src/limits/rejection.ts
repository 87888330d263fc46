import { errors, type GatewayError } from '../errors.js';
import { formatGoDuration } from '../duration.js';
import { rateLimitHeaders, wholeSeconds } from './headers.js';
import { formatNanos } from '../money.js';
import { limitKind, type LimitKind } from '../limit-kinds/index.js';
import { isInflight, refuses, type Check, type Outcome } from './store.js';

/** A slot frees when some request ends; there is no window to wait for, so suggest a short retry. */
const INFLIGHT_RETRY_MS = 1000;

/** How amounts read in a 429: counts as they are, money in the price currency (e.g. `0.0042 USD`). */
function amountFormatter(kind: LimitKind, currency: string): (amount: number) => string {
  if (kind.unit !== 'cost') return String;
  return (nanos) => `${formatNanos(nanos)} ${currency}`;
}

/**
 * The catalogue's 429 for each code a limit kind may carry. The kinds table (kinds.ts) words the
 * message and picks the code, so 429s stay table-driven; the catalogue holds status and type.
 */
const REFUSALS: Readonly<Record<LimitKind['code'], typeof errors.rateLimitExceeded>> = {
  rate_limit_exceeded: errors.rateLimitExceeded,
  insufficient_quota: errors.insufficientQuota,
};

/** A refused admission: the check to report and the 429 to answer with. */
export interface Rejection {
  readonly check: Check;
  readonly error: GatewayError;
}

/**
 * Builds the 429 for a refused admission. When several limits refuse, the one that frees last
 * is reported, so `Retry-After` is a time at which every one of them can pass again.
 */
export function rejectionFor(checks: readonly Check[], outcome: Outcome, currency: string): Rejection {
  let worst = -1;
  let worstWaitMs = -1;
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    if (!refuses(check, outcome.used[i]!)) continue;
    const waitMs = isInflight(check) ? INFLIGHT_RETRY_MS : outcome.resetMs[i]!;
    if (waitMs > worstWaitMs) {
      worst = i;
      worstWaitMs = waitMs;
    }
  }
  if (worst < 0) worst = 0; // unreachable while stores and this rule agree; never crash on it
  const check = checks[worst]!;
  const kind = limitKind(check.limit);
  const retryAfter = wholeSeconds(worstWaitMs);
  const headers = rateLimitHeaders(checks, outcome.used, outcome.resetMs);
  headers['retry-after'] = String(retryAfter);
  const amount = amountFormatter(kind, currency);
  const message = kind.message({
    subject: check.subject,
    max: amount(check.max),
    used: amount(outcome.used[worst]!),
    requested: amount(check.cost),
    tooLarge: check.cost > check.max,
    retry: `retry in ${formatGoDuration(retryAfter * 1000)}.`,
  });
  return { check, error: REFUSALS[kind.code](message, headers) };
}
