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
const POLICY_NAMES = ['rpm', 'tpm', 'tpd', 'concurrency'] as const;

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
  // Index of the tightest check per kind of limit, by SLOT.
  const tightest: Array<number | undefined> = [undefined, undefined, undefined, undefined];
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const slot = SLOT[check.limit];
    const best = tightest[slot];
    if (best === undefined || remainingOf(checks[best]!, used[best]!) > remainingOf(check, used[i]!)) tightest[slot] = i;
  }
  const headers: Record<string, string> = {};
  const openAi = (suffix: string, i: number | undefined): void => {
    if (i === undefined) return;
    headers[`x-ratelimit-limit-${suffix}`] = String(checks[i]!.max);
    headers[`x-ratelimit-remaining-${suffix}`] = String(remainingOf(checks[i]!, used[i]!));
    headers[`x-ratelimit-reset-${suffix}`] = formatGoDuration(resetMs[i]!);
  };
  openAi('requests', tightest[SLOT.rpm]);
  openAi('tokens', tightest[SLOT.tpm]);

  const policies: string[] = [];
  const limits: string[] = [];
  for (let slot = 0; slot < POLICY_NAMES.length; slot++) {
    const i = tightest[slot];
    if (i === undefined) continue;
    const name = POLICY_NAMES[slot]!;
    const check = checks[i]!;
    const remaining = remainingOf(check, used[i]!);
    if (check.windowMs === 0) {
      policies.push(`"${name}";q=${check.max};qu="concurrent-requests"`);
      limits.push(`"${name}";r=${remaining}`);
    } else {
      policies.push(`"${name}";q=${check.max};w=${slot === SLOT.tokensPerDay ? 86_400 : 60}`);
      limits.push(`"${name}";r=${remaining};t=${Math.ceil(resetMs[i]! / 1000)}`);
    }
  }
  if (policies.length > 0) {
    headers['ratelimit-policy'] = policies.join(', ');
    headers['ratelimit'] = limits.join(', ');
  }
  return headers;
}

function remainingOf(check: Check, used: number): number {
  return Math.max(0, check.max - used);
}
