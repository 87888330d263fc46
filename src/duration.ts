/**
 * Formats milliseconds the way Go's time.Duration.String() does, which is what OpenAI's
 * `x-ratelimit-reset-*` headers carry: `12ms`, `1s`, `6m0s`, `2m59.56s`, `1h0m0s`. Also how the
 * auth-failure 429 says when to retry, so it sits below both `limits/` and `auth/`.
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
