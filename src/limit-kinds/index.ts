import { toNanos } from '../money.js';

/**
 * The one table of limit kinds (SPEC 6.3): what each limit counts, over which window, how it
 * shows in the rate-limit headers and how a 429 names it. The plan, the stores, the headers,
 * the rejection messages, the metric labels and the config schema all read this table; adding
 * a kind is a row here plus whatever is really new about it (a new window or unit).
 * It lives beside `money.ts`, below `config/` and `limits/`: the config schema reads it, so it
 * cannot sit in `limits/`, which reads the config.
 */

/** When a limit's count starts over. */
export type LimitWindow =
  /** A fixed window that starts at a counter's first charge (rate-limiter-flexible's semantics). */
  | { readonly type: 'fixed'; readonly ms: number }
  /** The UTC calendar day: a first charge opens a window that ends at the next UTC midnight. */
  | { readonly type: 'utcDay' }
  /** The UTC calendar month: a first charge opens a window that ends at the first midnight of the next. */
  | { readonly type: 'utcMonth' }
  /** Requests in flight: leases, not a counter; nothing to wait for but a request to finish. */
  | { readonly type: 'inflight' };

/**
 * What one admitted request is charged against a limit: 1 request, its tokens, its cost (in
 * nano-units of the price currency, so counters stay integers and sums stay exact), or an
 * in-flight lease.
 */
export type LimitUnit = 'request' | 'token' | 'cost' | 'inflight';


export interface LimitKind {
  readonly name: string;
  readonly window: LimitWindow;
  readonly unit: LimitUnit;
  /**
   * The name in the IETF `RateLimit-Policy` / `RateLimit` fields (a Structured Field String).
   * Budgets in money have none: the draft's quota units cannot say "currency", and a quota in
   * nano-dollars would mislead; their 429 says what was spent and when it resets.
   */
  readonly policy?: string;
  /** The OpenAI-style header trio this kind fills: `x-ratelimit-*-requests` or `-tokens`. */
  readonly openAiHeaders?: 'requests' | 'tokens';
  /** The OpenAI error code of its 429: a budget is `insufficient_quota`, a rate `rate_limit_exceeded`. */
  readonly code: 'rate_limit_exceeded' | 'insufficient_quota';
  /** The 429 message: what was hit, on whom, and when to retry. */
  message(refused: RefusedLimit): string;
}

/** What a 429 message may say about the limit that refused a request (amounts already in words). */
export interface RefusedLimit {
  /** `key ci-bot`, `subject alice`, `project team-a/prod`. */
  readonly subject: string;
  readonly max: string;
  readonly used: string;
  /** What this request asked for (its estimated tokens or cost, or 1). */
  readonly requested: string;
  /** Whether the request alone asks for more than the whole limit. */
  readonly tooLarge: boolean;
  /** `retry in 1m0s.` */
  readonly retry: string;
}

const MINUTE: LimitWindow = { type: 'fixed', ms: 60_000 };

/** The kinds, in the order checks are planned and the IETF fields list them. */
export const LIMIT_KINDS = [
  {
    name: 'rpm',
    window: MINUTE,
    unit: 'request',
    policy: '"rpm"',
    openAiHeaders: 'requests',
    code: 'rate_limit_exceeded',
    message: (r) => `Rate limit reached for requests per minute (rpm) on ${r.subject}: limit ${r.max}, ${r.retry}`,
  },
  {
    name: 'tpm',
    window: MINUTE,
    unit: 'token',
    policy: '"tpm"',
    openAiHeaders: 'tokens',
    code: 'rate_limit_exceeded',
    message: (r) =>
      r.tooLarge
        ? `Request too large for tokens per minute (tpm) on ${r.subject}: limit ${r.max}, requested ${r.requested}. Lower max_tokens or shorten the messages.`
        : `Rate limit reached for tokens per minute (tpm) on ${r.subject}: limit ${r.max}, used ${r.used}, requested ${r.requested}, ${r.retry}`,
  },
  {
    name: 'tokensPerDay',
    window: { type: 'utcDay' },
    unit: 'token',
    policy: '"tpd"',
    code: 'insufficient_quota',
    message: (r) => `Daily token budget (tokensPerDay) exhausted on ${r.subject}: limit ${r.max}, used ${r.used}, requested ${r.requested}, ${r.retry}`,
  },
  {
    name: 'costPerDay',
    window: { type: 'utcDay' },
    unit: 'cost',
    code: 'insufficient_quota',
    message: (r) => `Daily cost budget (costPerDay) exhausted on ${r.subject}: limit ${r.max}, used ${r.used}, requested ${r.requested}; it resets at 00:00 UTC, ${r.retry}`,
  },
  {
    name: 'costPerMonth',
    window: { type: 'utcMonth' },
    unit: 'cost',
    code: 'insufficient_quota',
    message: (r) => `Monthly cost budget (costPerMonth) exhausted on ${r.subject}: limit ${r.max}, used ${r.used}, requested ${r.requested}; it resets on the 1st at 00:00 UTC, ${r.retry}`,
  },
  {
    name: 'concurrency',
    window: { type: 'inflight' },
    unit: 'inflight',
    policy: '"concurrency"',
    code: 'rate_limit_exceeded',
    message: (r) => `Concurrency limit reached on ${r.subject}: limit ${r.max} requests in flight, ${r.retry}`,
  },
] as const satisfies readonly LimitKind[];

export type LimitName = (typeof LIMIT_KINDS)[number]['name'];

const NEVER_REFUSES = (): string => 'spend counters never refuse';

/**
 * What a team has spent today and this month (SPEC 16: a team record's `spend`), counted in the
 * team's scope beside its limits — the same hash, charged and settled like tokensPerDay and the
 * budgets, never refusing — so reading a team's spend is one read of its counters, not a ledger
 * scan. Not limits: the config takes none of them and the headers show none. Their positions
 * follow LIMIT_KINDS' in the store's packed counters.
 */
export const SPEND_KINDS = [
  { name: 'spend.day.requests', window: { type: 'utcDay' }, unit: 'request', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
  { name: 'spend.day.tokens', window: { type: 'utcDay' }, unit: 'token', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
  { name: 'spend.day.cost', window: { type: 'utcDay' }, unit: 'cost', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
  { name: 'spend.month.requests', window: { type: 'utcMonth' }, unit: 'request', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
  { name: 'spend.month.tokens', window: { type: 'utcMonth' }, unit: 'token', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
  { name: 'spend.month.cost', window: { type: 'utcMonth' }, unit: 'cost', code: 'rate_limit_exceeded', message: NEVER_REFUSES },
] as const satisfies readonly LimitKind[];

export type SpendName = (typeof SPEND_KINDS)[number]['name'];

/** Everything a scope counts: its limits, and (a team's) its spend. */
export type CounterName = LimitName | SpendName;

/** The `max` of a spend counter: nothing it counts ever reaches it. */
export const UNLIMITED_MAX = Number.MAX_VALUE;

/**
 * Limits of one scope as configured: every kind optional (absent = unlimited). `soft`: the
 * scope's budgets (tokensPerDay, costPerDay, costPerMonth) alert and never refuse (SPEC 24).
 */
export type LimitSet = { readonly [K in LimitName]?: number } & { readonly soft?: boolean };

/** The limits a LimitSet configures, by name and amount (`soft` is a flag, not a limit). */
export function configuredLimits(set: LimitSet): Array<[LimitName, number]> {
  return (Object.entries(set) as Array<[LimitName | 'soft', number | boolean]>).filter((e): e is [LimitName, number] => e[0] !== 'soft');
}

/** A budget: a token or cost limit over a UTC day or month — what alerts and what `soft` makes non-refusing (SPEC 24). */
export function isBudget(kind: LimitKind): boolean {
  return (kind.unit === 'token' || kind.unit === 'cost') && (kind.window.type === 'utcDay' || kind.window.type === 'utcMonth');
}

export const LIMIT_NAMES: readonly LimitName[] = LIMIT_KINDS.map((kind) => kind.name);

const BY_NAME = Object.fromEntries([...LIMIT_KINDS, ...SPEND_KINDS].map((kind, index) => [kind.name, { kind, index }])) as Readonly<
  Record<CounterName, { readonly kind: LimitKind; readonly index: number }>
>;

/** The table row of a limit (or spend counter). */
export function limitKind(name: CounterName): LimitKind {
  return BY_NAME[name].kind;
}

/** A kind's position in the table (header and plan order); spend counters come after every limit. */
export function limitIndex(name: CounterName): number {
  return BY_NAME[name].index;
}

/** Seconds a windowed kind's policy covers (the IETF `w` parameter); undefined for in-flight limits. */
export function policyWindowSeconds(kind: LimitKind): number | undefined {
  switch (kind.window.type) {
    case 'fixed':
      return kind.window.ms / 1000;
    case 'utcDay':
      return 86_400;
    case 'utcMonth':
    case 'inflight':
      return undefined;
  }
}

/** A configured limit value as its counter holds it (currency amounts become nano-units: `costPerDay: 2.5` is 2,500,000,000). */
export function counterLimit(kind: LimitKind, configured: number): number {
  return kind.unit === 'cost' ? toNanos(configured) : configured;
}
