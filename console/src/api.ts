/** The admin API as the console calls it: the session cookie as credential, the CSRF token on writes. */

export type Role = 'admin' | 'viewer' | 'team-admin';

/** `POST /admin/session` and `GET /admin/session` (SPEC 17). */
export interface Session {
  readonly role: Role;
  readonly team: string | null;
  readonly keyId: string;
  readonly csrfToken: string;
  readonly expiresAt: string;
  /** A person signed in through the identity provider (SPEC 25). */
  readonly person?: { readonly id: string; readonly email: string | null; readonly name: string | null };
  /** Where such a person signs out at the identity provider too, when it has an end-session endpoint. */
  readonly signOutUrl?: string | null;
}

/** `GET /admin/oidc/status`: what the sign-in page offers (SPEC 25). */
export interface SignInOptions {
  readonly keySignIn: boolean;
  readonly oidc: { readonly name: string; readonly ready: boolean; readonly message?: string } | null;
}

/** An error answer of the admin API (`{"error":{message,type,param,code}}`), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null,
  ) {
    super(message);
  }
}

/** What the shell does when an answer says the session is gone (401) or the database is away (503). */
export interface ApiEvents {
  sessionEnded(): void;
  databaseDown(down: boolean): void;
}

let csrfToken: string | null = null;
let events: ApiEvents = { sessionEnded: () => undefined, databaseDown: () => undefined };

export function listenToApi(next: ApiEvents): void {
  events = next;
}

/** Kept in memory only: the key itself is never stored, the cookie is HttpOnly, and a reload asks GET /admin/session again. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Query = Readonly<Record<string, string | number | undefined>>;

/** `/admin/...` with the query parameters that are set (empty strings are left out). */
export function adminUrl(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return `/admin/${path}${text === '' ? '' : `?${text}`}`;
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { message?: string; code?: string | null; param?: string | null } };
    const error = body.error ?? {};
    return new ApiError(res.status, error.code ?? String(res.status), error.message ?? res.statusText, error.param ?? null);
  } catch {
    return new ApiError(res.status, String(res.status), `The gateway answered ${res.status} ${res.statusText}.`, null);
  }
}

export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly body?: unknown;
  /** Sign-in and the session check answer 401 as a normal outcome, not as "the session ended". */
  readonly sessionCall?: boolean;
}

/** GETs started before the page that reads them is drawn, by URL; taken once, and only while fresh. */
const prefetched = new Map<string, { readonly answer: Promise<unknown>; readonly at: number }>();
/** A prefetched answer older than this is dropped: the page asks again. */
const PREFETCH_FRESH_MS = 5000;

/**
 * Starts `GET url` now, for the page that will ask for it once drawn (Overview's read at sign-in:
 * its answer is on the way while the shell renders, instead of after the render and the effects).
 */
export function prefetch(url: string): void {
  const answer = send(url, {});
  // Read later (or never): a failure is the page's to show, not an unhandled rejection now.
  answer.catch(() => undefined);
  prefetched.set(url, { answer, at: Date.now() });
}

/** Calls the admin API; resolves to the JSON answer (undefined for 204), rejects with an ApiError. */
export function call<T>(url: string, options: CallOptions = {}): Promise<T> {
  const early = options.method === undefined || options.method === 'GET' ? prefetched.get(url) : undefined;
  prefetched.delete(url);
  if (early !== undefined && Date.now() - early.at < PREFETCH_FRESH_MS) return early.answer as Promise<T>;
  return send<T>(url, options);
}

async function send<T>(url: string, options: CallOptions): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(url, { method, headers, credentials: 'same-origin', ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  } catch {
    throw new ApiError(0, 'network_error', 'The gateway cannot be reached.', null);
  }
  if (res.ok) {
    events.databaseDown(false);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }
  const error = await errorOf(res);
  if (error.status === 401 && options.sessionCall !== true) events.sessionEnded();
  if (error.status === 503 && error.code === 'database_unavailable') events.databaseDown(true);
  throw error;
}

export const signIn = (key: string): Promise<Session> => call<Session>('/admin/session', { method: 'POST', body: { key }, sessionCall: true });
export const currentSession = (): Promise<Session> => call<Session>('/admin/session', { sessionCall: true });
export const signInOptions = (): Promise<SignInOptions> => call<SignInOptions>('/admin/oidc/status', { sessionCall: true });
export const signOut = (): Promise<void> => call<void>('/admin/session', { method: 'DELETE', sessionCall: true });

/** A list answer of the admin API. */
export interface List<T> {
  readonly object: 'list';
  readonly data: T[];
}

/** A key's or team's limits; `soft`: its budgets alert and never refuse (SPEC 24). */
export type Limits = Partial<Record<'rpm' | 'tpm' | 'tokensPerDay' | 'costPerDay' | 'costPerMonth' | 'concurrency', number>> & { readonly soft?: boolean };

export interface Key {
  readonly id: string;
  readonly team: string;
  readonly projects: readonly string[];
  readonly defaultProject: string;
  readonly limits: Limits;
  /** Its own model patterns (SPEC 21); null: none of its own. */
  readonly models: readonly string[] | null;
  readonly description: string | null;
  readonly createdAt: string | null;
  readonly expiresAt: string | null;
  readonly disabled: boolean;
  readonly source: 'api' | 'config';
}

export interface Spend {
  readonly requests: number;
  readonly total_tokens: number;
  readonly cost: number;
}

export interface Team {
  readonly id: string;
  readonly description: string | null;
  readonly limits: Limits;
  readonly models: readonly string[] | null;
  readonly disabled: boolean;
  readonly createdAt: string | null;
  readonly source: 'api' | 'config';
  readonly spend: { readonly day: Spend; readonly month: Spend };
  readonly remaining: Limits;
}

/** `GET /admin/models` (SPEC 21): groups, default, each team's lists, this month's usage by model. */
export interface ModelsTable {
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly default: readonly string[];
  readonly teams: ReadonlyArray<{ readonly id: string; readonly models: readonly string[] | null; readonly effective: readonly string[] }>;
  readonly currency: string;
  readonly usage: ReadonlyArray<{ readonly team: string; readonly model: string; readonly requests: number; readonly total_tokens: number; readonly cost: number }>;
  readonly routing: ModelRouting;
}

/** SPEC 22: where chat goes, by model; each upstream's targets and their state. */
export interface ModelRouting {
  readonly routes: ReadonlyArray<{ readonly match: string; readonly upstream: string; readonly default: boolean }>;
  readonly aliases: ReadonlyArray<{ readonly alias: string; readonly target: string; readonly upstream: string }>;
  readonly fallbacks: ReadonlyArray<{ readonly model: string; readonly to: ReadonlyArray<{ readonly model: string; readonly upstream: string }> }>;
  readonly upstreams: Readonly<Record<string, { readonly up: number; readonly targets: ReadonlyArray<{ readonly target: string; readonly state: string }> }>>;
}

export interface UsageRow {
  readonly team: string;
  readonly project: string;
  readonly model?: string;
  readonly key?: string;
  readonly day?: string;
  readonly month?: string;
  readonly route?: string;
  readonly requests: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly cost: number;
}

export interface LedgerRow {
  readonly id: string;
  readonly request_id: string;
  readonly at: string;
  readonly team: string;
  readonly project: string;
  readonly key: string;
  readonly route: string;
  readonly method: string;
  readonly status: number;
  readonly model: string | null;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly cost: number;
  readonly estimated: boolean;
  readonly request_bytes: number;
  readonly duration_ms: number;
}

export interface LedgerPage extends List<LedgerRow> {
  readonly has_more: boolean;
  readonly last_id: string | null;
}

export interface AuditEntry {
  readonly at: string;
  readonly actor: string;
  readonly actorRole?: string;
  readonly action: string;
  readonly target: string;
  readonly result: string;
  readonly requestId: string;
}

export interface Resource {
  readonly kind: 'model' | 'training_job';
  readonly id: string;
  readonly team: string;
  readonly project: string;
  readonly artifact?: string;
  readonly createdAt: string;
}

/** Money as the admin API answers it (decimal strings in /admin/overview, numbers in /admin/usage). */
export type Amount = string | number;

export interface Totals {
  readonly requests: number;
  readonly tokens: number;
  readonly cost: Amount;
}

export interface Overview {
  readonly currency: string;
  readonly today: Totals;
  readonly month: Totals;
  readonly costPerDay: ReadonlyArray<{ readonly day: string; readonly team: string; readonly cost: Amount }>;
  readonly top: Readonly<Record<'teams' | 'projects' | 'models', ReadonlyArray<{ readonly name: string; readonly cost: Amount }>>>;
  readonly lastHour: { readonly requests: number; readonly rejected429: number; readonly upstreamErrors: number };
}

export interface ConfigState {
  readonly source: string;
  readonly loadedAt: string;
  readonly lastReload: { readonly at: string; readonly outcome: 'applied' | 'refused'; readonly error?: string } | null;
  readonly restartRequired: readonly string[];
}

/** GET /admin/notifications (SPEC 24): what the Settings page shows of each sink. */
export interface Notifications {
  readonly delivering: boolean;
  readonly sinks: ReadonlyArray<{
    readonly name: string;
    readonly kind: 'webhook' | 'export';
    readonly url: string;
    readonly format: string;
    readonly pending: number;
    readonly lagSeconds: number;
    readonly lastError: string | null;
    readonly lastSuccessAt: string | null;
  }>;
}
