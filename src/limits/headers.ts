import { LIMIT_KINDS, limitIndex, policyWindowSeconds, type LimitKind } from '../limit-kinds/index.js';
import { formatGoDuration } from '../duration.js';
import type { Check } from './store.js';

/** Whole seconds, at least 1: what `Retry-After` and the IETF `t` parameter carry. */
export function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The OpenAI-style header names, spelled out once rather than built per response. */
const OPENAI_HEADERS = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
} as const;

/**
 * The response headers of an admission (or a 429): for each kind of limit, the values of the
 * tightest applicable scope — the one with the least remaining. Kinds with no limit are left out.
 *
 * OpenAI-style `x-ratelimit-*-requests` / `-tokens` describe the kinds the table maps to them
 * (rpm, tpm). The IETF fields follow draft-ietf-httpapi-ratelimit-headers-11 (sections 3 and 4):
 * both are Structured Field Lists (RFC 9651) of String items, `RateLimit-Policy: "rpm";q=100;w=60,
 * "tpm";q=1000;w=60` and `RateLimit: "rpm";r=42;t=17`. In-flight limits use the registered unit
 * `qu="concurrent-requests"` and have no window; token policies carry no `qu`, since the draft's
 * unit registry has no token unit (the policy name says it).
 */
export function rateLimitHeaders(checks: readonly Check[], used: readonly number[], resetMs: readonly number[]): Record<string, string> {
  // Index of the tightest check per kind, by table position (-1: none).
  const tightest = new Array<number>(LIMIT_KINDS.length).fill(-1);
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const slot = limitIndex(check.limit);
    // Spend counters (a team's) are not limits: no header shows them.
    if (slot >= LIMIT_KINDS.length) continue;
    const best = tightest[slot]!;
    if (best === -1 || remainingOf(checks[best]!, used[best]!) > remainingOf(check, used[i]!)) tightest[slot] = i;
  }
  const headers: Record<string, string> = {};
  let policies = '';
  let limits = '';
  for (let slot = 0; slot < LIMIT_KINDS.length; slot++) {
    const i = tightest[slot]!;
    if (i === -1) continue;
    const kind: LimitKind = LIMIT_KINDS[slot]!;
    const check = checks[i]!;
    const remaining = remainingOf(check, used[i]!);
    if (kind.openAiHeaders !== undefined) {
      const names = OPENAI_HEADERS[kind.openAiHeaders];
      headers[names[0]] = String(check.max);
      headers[names[1]] = String(remaining);
      headers[names[2]] = formatGoDuration(resetMs[i]!);
    }
    if (kind.policy === undefined) continue;
    const separator = policies === '' ? '' : ', ';
    const windowSeconds = policyWindowSeconds(kind);
    if (windowSeconds === undefined) {
      policies += `${separator}${kind.policy};q=${check.max};qu="concurrent-requests"`;
      limits += `${separator}${kind.policy};r=${remaining}`;
    } else {
      policies += `${separator}${kind.policy};q=${check.max};w=${windowSeconds}`;
      limits += `${separator}${kind.policy};r=${remaining};t=${Math.ceil(resetMs[i]! / 1000)}`;
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
