import type { Check, LimitName } from './store.js';

/**
 * Formats milliseconds the way Go's time.Duration.String() does, which is what OpenAI's
 * `x-ratelimit-reset-*` headers carry: `12ms`, `1s`, `6m0s`, `2m59.56s`, `1h0m0s`.
 */
export function formatGoDuration(ms: number): string {
  const total = Math.round(ms);
  if (total <= 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const secondsMs = total % 60_000;
  const whole = Math.floor(secondsMs / 1000);
  const fraction = secondsMs % 1000;
  const seconds = fraction === 0 ? `${whole}` : `${whole}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Whole seconds, at least 1: what `Retry-After` and the IETF `t` parameter carry. */
export function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Position of each kind of limit: the order the IETF fields list them in. */
const SLOT: Readonly<Record<LimitName, number>> = { rpm: 0, tpm: 1, tokensPerDay: 2, concurrency: 3 };
const POLICY_NAMES = ['"rpm"', '"tpm"', '"tpd"', '"concurrency"'] as const;
/** The OpenAI-style header names, spelled out once rather than built per response. */
const REQUEST_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'] as const;
const TOKEN_HEADERS = ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'] as const;

/**
 * The response headers of an admission (or a 429): for each kind of limit, the values of the
 * tightest applicable scope — the one with the least remaining. Kinds with no limit are left out.
 *
 * OpenAI-style `x-ratelimit-*-requests` describe rpm and `x-ratelimit-*-tokens` tpm. The IETF
 * fields follow draft-ietf-httpapi-ratelimit-headers-11 (sections 3 and 4): both are Structured
 * Field Lists (RFC 9651) of String items, `RateLimit-Policy: "rpm";q=100;w=60, "tpm";q=1000;w=60`
 * and `RateLimit: "rpm";r=42;t=17`. Concurrency uses the registered unit
 * `qu="concurrent-requests"` and has no window; token policies carry no `qu`, since the draft's
 * unit registry has no token unit (the policy name says it).
 */
export function rateLimitHeaders(checks: readonly Check[], used: readonly number[], resetMs: readonly number[]): Record<string, string> {
  // Index of the tightest check per kind of limit, by SLOT (-1: none).
  const tightest = [-1, -1, -1, -1];
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const slot = SLOT[check.limit];
    const best = tightest[slot]!;
    if (best === -1 || remainingOf(checks[best]!, used[best]!) > remainingOf(check, used[i]!)) tightest[slot] = i;
  }
  const headers: Record<string, string> = {};
  const openAi = (names: readonly [string, string, string], i: number): void => {
    if (i === -1) return;
    headers[names[0]] = String(checks[i]!.max);
    headers[names[1]] = String(remainingOf(checks[i]!, used[i]!));
    headers[names[2]] = formatGoDuration(resetMs[i]!);
  };
  openAi(REQUEST_HEADERS, tightest[SLOT.rpm]!);
  openAi(TOKEN_HEADERS, tightest[SLOT.tpm]!);

  let policies = '';
  let limits = '';
  for (let slot = 0; slot < POLICY_NAMES.length; slot++) {
    const i = tightest[slot]!;
    if (i === -1) continue;
    const separator = policies === '' ? '' : ', ';
    const name = POLICY_NAMES[slot]!;
    const check = checks[i]!;
    const remaining = remainingOf(check, used[i]!);
    if (check.windowMs === 0) {
      policies += `${separator}${name};q=${check.max};qu="concurrent-requests"`;
      limits += `${separator}${name};r=${remaining}`;
    } else {
      policies += `${separator}${name};q=${check.max};w=${slot === SLOT.tokensPerDay ? 86_400 : 60}`;
      limits += `${separator}${name};r=${remaining};t=${Math.ceil(resetMs[i]! / 1000)}`;
    }
  }
  if (policies !== '') {
    headers['ratelimit-policy'] = policies;
    headers['ratelimit'] = limits;
  }
  return headers;
}

function remainingOf(check: Check, used: number): number {
  return Math.max(0, check.max - used);
}
