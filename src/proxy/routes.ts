import type { UpstreamName } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';
import type { JsonPointer } from '../json-pointer.js';
import { compileTemplate, verbOf } from '../route-template.js';

export { templatesOverlap } from '../route-template.js';


/**
 * What the gateway does with a request body:
 * - `chat`: buffered (up to `server.bodyLimit`), validated (422 on failure), forwarded as the original bytes;
 * - `json`: buffered (up to `server.bodyLimit`) for a step that reads it, forwarded as the original bytes;
 * - `stream`: streamed through untouched, counted against `server.streamBodyLimit` (413 past it);
 * - `none`: no body expected; whatever is sent passes through as it comes.
 */
export type BodyHandling = 'chat' | 'json' | 'stream' | 'none';

/**
 * What a route does with training resources when ownership is on (SPEC 13, 20): general rules
 * over any resource kind, which the built-in routes and the configuration's `routes:` both use.
 * - `checks`: the resource named by a path parameter must be the caller's (`release`: a 2xx frees it);
 * - `checksBody`: the resource named by a top-level body field (read as the upstream's Python
 *   reads it, the upload held until it is seen) must be the caller's;
 * - `creates`: the id at a JSON pointer of a 2xx answer (`/id`, `/run_id`) becomes the caller's resource of this kind;
 * - `checksResponse`: the id at a JSON pointer of a 2xx answer must be the caller's, else the answer is a 404;
 * - `modelName`: a model creation's `entity/project/name` must not be another team's (read whole);
 * - `chatModel`: a chat's `wandb-artifact:///` model must not be another team's.
 */
export interface OwnershipRule {
  readonly checks?: { readonly param: string; readonly kind: string; readonly release?: boolean };
  readonly checksBody?: { readonly field: string; readonly kind: string };
  readonly creates?: AnswerId;
  readonly checksResponse?: AnswerId;
  readonly modelName?: true;
  readonly chatModel?: true;
}

/** A resource named in a JSON answer: its kind, and where the id is (RFC 6901 tokens). */
export interface AnswerId {
  readonly kind: string;
  readonly id: JsonPointer;
}

/** Where a creation's answer holds its id unless the route says otherwise. */
export const ID_FIELD: JsonPointer = ['id'];

/** How a forwarded request is metered: by the tokens of its reply, as a request, or not at all. */
export type Metering = 'tokens' | 'requests' | 'none';

/**
 * A route's policy, as data: the pipeline reads these fields and has no per-route branches.
 * Adding a route is an entry in ROUTES; a new behaviour is a field here and the step that reads it.
 */
export interface RouteSpec {
  /** The template used as the `route` metric label, e.g. `/v1/preview/models/{model_id}`. */
  readonly template: string;
  readonly methods: readonly string[];
  readonly upstream: UpstreamName;
  readonly body: BodyHandling;
  /** Whether the request passes the limits (SPEC 6.3) and carries rate-limit headers. */
  readonly limited: boolean;
  /** Whether a request is a ledger row (SPEC 14.1); unset: when limited. A status poll may be unlimited and still a row. */
  readonly ledger?: boolean;
  readonly metering: Metering;
  /** POST of this route creates a training job of this kind (counted in metrics). */
  readonly trainingJobKind?: 'rl' | 'sft';
  /** How the route touches training resources (checked only when ownership is on). */
  readonly ownership?: OwnershipRule;
  /** A top-level field of the (JSON) body naming a model the caller must be allowed to use (SPEC 21). */
  readonly checksModel?: string;
  /**
   * Answered by the gateway from the caller's filtered model list (SPEC 21): `model-list` the list
   * (passed through for a caller from whom nothing is withheld), `model` one model, always.
   */
  readonly answeredBy?: 'model-list' | 'model';
}

export interface RouteMatch {
  readonly route: RouteSpec;
  /** Allowed for this method? When false, `route.methods` goes in the Allow header (405). */
  readonly methodAllowed: boolean;
  /** When several routes share the path and none allows the method: all their methods (the Allow header). */
  readonly allow?: readonly string[];
}

/** Preview routes: the training service's resources, bodies streamed, limited, counted as requests. */
const preview = (template: string, methods: readonly string[], extra: Partial<RouteSpec> = {}): RouteSpec => ({
  template,
  methods,
  upstream: 'service',
  body: 'stream',
  limited: true,
  metering: 'requests',
  ...extra,
});

const modelInPath = { checks: { param: 'model_id', kind: 'model' } } as const;
const jobInPath = { checks: { param: 'training_job_id', kind: 'training_job' } } as const;
/** A job creation: its body's model must be the caller's; the job it answers with becomes the caller's. */
const jobCreation = { checksBody: { field: 'model_id', kind: 'model' }, creates: { kind: 'training_job', id: ID_FIELD } } as const;

/** The route table of SPEC 4 and the seed document. */
export const ROUTES: readonly RouteSpec[] = [
  { template: '/v1/chat/completions', methods: ['POST'], upstream: 'service', body: 'chat', limited: true, metering: 'tokens', ownership: { chatModel: true } },
  // Each caller's own list, filtered by the rule that admits chat (SPEC 21); `/*`: ids hold `/`.
  { template: '/v1/models', methods: ['GET'], upstream: 'inference', body: 'none', limited: true, metering: 'requests', answeredBy: 'model-list' },
  { template: '/v1/models/*', methods: ['GET'], upstream: 'inference', body: 'none', limited: true, metering: 'requests', answeredBy: 'model' },
  // A model creation is a small JSON body, read whole: its name is checked before it is forwarded.
  preview('/v1/preview/models', ['POST'], { body: 'json', ownership: { creates: { kind: 'model', id: ID_FIELD }, modelName: true }, checksModel: 'base_model' }),
  preview('/v1/preview/models/{model_id}', ['DELETE'], { ownership: { checks: { ...modelInPath.checks, release: true } } }),
  preview('/v1/preview/models/{model_id}/checkpoints', ['GET', 'DELETE'], { ownership: modelInPath }),
  preview('/v1/preview/models/{model_id}/log', ['POST'], { ownership: modelInPath }),
  preview('/v1/preview/training-jobs', ['POST'], { trainingJobKind: 'rl', ownership: jobCreation }),
  preview('/v1/preview/sft-training-jobs', ['POST'], { trainingJobKind: 'sft', ownership: jobCreation }),
  preview('/v1/preview/training-jobs/{training_job_id}', ['GET'], { ownership: jobInPath }),
  preview('/v1/preview/training-jobs/{training_job_id}/events', ['GET'], { ownership: jobInPath }),
  // Health needs a key like every /v1 route, but is neither limited nor metered: probes must not eat quota.
  { template: '/v1/health', methods: ['GET'], upstream: 'service', body: 'none', limited: false, metering: 'none' },
  { template: '/v1/system-check', methods: ['GET'], upstream: 'service', body: 'none', limited: false, metering: 'none' },
];

/**
 * The path a route is matched on: percent-decoded once, as the upstream's framework (Starlette,
 * uvicorn) decodes it before routing — `/runs/r1%3Aclose` is `/runs/r1:close` to the training
 * service, so it is to the table too. assertSafePath has refused what must not decode (encoded
 * slashes, NUL, bad escapes); a path that still does not decode is undefined.
 */
export function routingPath(path: string): string | undefined {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/**
 * The value of a `{param}` of a route's template in a path, read from the path decoded as the
 * upstream decodes it (so the gateway checks the id the upstream will act on); undefined when
 * the path does not match or does not decode.
 */
export function pathParam(template: string, path: string, param: string): string | undefined {
  let pattern = paramPatterns.get(template);
  if (!pattern) {
    pattern = compileTemplate(template, true);
    paramPatterns.set(template, pattern);
  }
  const decoded = routingPath(path);
  return decoded === undefined ? undefined : pattern.exec(decoded)?.groups?.[param];
}

/** Param patterns, compiled on a template's first use (built-in and config templates: a bounded set). */
const paramPatterns = new Map<string, RegExp>();

export interface RouteTable {
  /** Every route of the table, in order: what per-route chains are built from. */
  readonly routes: readonly RouteSpec[];
  /** The route for a percent-decoded path (no query string; see routingPath), or undefined for 404. */
  match(path: string, method: string): RouteMatch | undefined;
}

/** The built-in routes, then the configuration's (SPEC 20): one table, matched in order. */
export function createRouteTable(routes: readonly RouteSpec[] = ROUTES): RouteTable {
  // A parameter never holds a `:verb` suffix of a custom method this table knows (SPEC 23).
  const knownVerbs = new Set(routes.map((route) => verbOf(route.template)).filter((verb) => verb !== undefined));
  const compiled = routes.map((route) => ({ route, pattern: compileTemplate(route.template, false, knownVerbs) }));
  return {
    routes,
    match(path, method) {
      // Several templates can share a path (config routes may split one path's methods); the method decides.
      let fallback: RouteSpec | undefined;
      let allow: string[] | undefined;
      for (const { route, pattern } of compiled) {
        if (!pattern.test(path)) continue;
        if (route.methods.includes(method)) return { route, methodAllowed: true };
        if (fallback) allow = [...new Set([...(allow ?? fallback.methods), ...route.methods])];
        fallback ??= route;
      }
      if (!fallback) return undefined;
      return allow ? { route: fallback, methodAllowed: false, allow } : { route: fallback, methodAllowed: false };
    },
  };
}

/**
 * What a request URL resolves to: its route, or the refusal to answer instead — and, for a 405,
 * the template its path matched (its trace names the route; a 400 or 404 has none).
 */
export type RouteResolution =
  | { readonly route: RouteSpec; readonly refusal?: undefined }
  | { readonly route?: undefined; readonly refusal: GatewayError; readonly template: string | undefined };

/**
 * The route a request URL addresses, or the 400 (unsafe path), 404 (no route) or 405 (with
 * `Allow`) to answer instead. Nothing is forwarded for a refused request.
 */
export function routeOf(table: RouteTable, method: string, url: string): RouteResolution {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  try {
    assertSafePath(path);
  } catch (err) {
    return { refusal: err as GatewayError, template: undefined };
  }
  const decoded = routingPath(path);
  const match = decoded === undefined ? undefined : table.match(decoded, method);
  if (!match) return { refusal: errors.routeNotFound(method, path), template: undefined };
  if (!match.methodAllowed) {
    const allowed = (match.allow ?? match.route.methods).join(', ');
    return { refusal: errors.methodNotAllowed(method, match.route.template, allowed), template: match.route.template };
  }
  return { route: match.route };
}

/** routeOf, throwing its refusal. */
export function resolveRoute(table: RouteTable, method: string, url: string): RouteSpec {
  const resolved = routeOf(table, method, url);
  if (resolved.refusal) throw resolved.refusal;
  return resolved.route;
}

/** Paths the gateway answers from its model list (`GET /v1/models/{id}`), never forwarded. */
const MODEL_PATH_PREFIX = '/v1/models/';
// `%25` (an encoded `%`) any number of times first: an upstream or a proxy that decodes twice reads `%252F` as `/`.
const DOT_SEGMENT = /^(?:\.|%(?:25)*2e){1,2}$/i;
const ENCODED_SEPARATOR = /%(?:25)*(?:2f|5c)/i;

/**
 * Rejects paths that could address something other than what they appear to: `..`/`.` segments
 * (raw or percent-encoded) and encoded slashes or backslashes, which upstream frameworks may
 * decode into a different route; and an encoded NUL. Such requests are answered 400 and never forwarded.
 */
export function assertSafePath(path: string): void {
  if (path.includes('\\')) throw unsafePath('a backslash');
  // A model id holds `/`, which the openai SDKs' retrieve() sends encoded; the gateway answers
  // these itself (SPEC 21), so no upstream can read the path differently.
  const encodedSlashAllowed = path.startsWith(MODEL_PATH_PREFIX);
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment)) throw unsafePath('a "." or ".." segment');
    if (!encodedSlashAllowed && ENCODED_SEPARATOR.test(segment)) throw unsafePath('an encoded slash');
  }
  if (!path.includes('%')) return;
  assertNoEncodedNul(path);
  // An id that does not decode is one no upstream can act on as sent (SPEC 9: a 4xx, never forwarded).
  if (!decodes(path)) throw malformedPathEncoding();
}

const ENCODED_NUL = /%(?:25)*00/;

/** A path with an encoded NUL names an id no database holding ids (PostgreSQL's text) can store: 400 on /v1 and /admin alike. */
export function assertNoEncodedNul(path: string): void {
  if (ENCODED_NUL.test(path)) throw unsafePath('an encoded NUL (%00)');
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The 400 for a path with bad percent-encoding (`%ZZ`, a lone `%`, bytes that are not UTF-8): /v1 and /admin alike. */
export function malformedPathEncoding(): GatewayError {
  return errors.pathEncodingInvalid();
}

function unsafePath(what: string): GatewayError {
  return errors.pathUnsafe(what);
}
