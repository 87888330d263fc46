import type { UpstreamName } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';


/**
 * What the gateway does with a request body:
 * - `chat`: buffered (up to `server.bodyLimit`), validated (422 on failure), forwarded as the original bytes;
 * - `json`: buffered (up to `server.bodyLimit`) for a step that reads it, forwarded as the original bytes;
 * - `stream`: streamed through untouched, counted against `server.streamBodyLimit` (413 past it);
 * - `none`: no body expected; whatever is sent passes through as it comes.
 */
export type BodyHandling = 'chat' | 'json' | 'stream' | 'none';

/**
 * What a route does with training resources when ownership is on (SPEC 13):
 * - `path`: the resource named by a path parameter must be the caller's (`release`: a 2xx frees it);
 * - `create-model`: the name must not be another team's; a 2xx's `id` becomes the caller's;
 * - `create-job`: the body's top-level `model_id` must be the caller's; a 2xx's `id` becomes the caller's;
 * - `chat-model`: a `wandb-artifact:///` model must not be another team's.
 */
export type OwnershipRule =
  | { readonly check: 'path'; readonly kind: 'model' | 'training_job'; readonly param: string; readonly release?: boolean }
  | { readonly check: 'create-model' }
  | { readonly check: 'create-job' }
  | { readonly check: 'chat-model' };

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
  readonly metering: Metering;
  /** POST of this route creates a training job of this kind (counted in metrics). */
  readonly trainingJobKind?: 'rl' | 'sft';
  /** How the route touches training resources (checked only when ownership is on). */
  readonly ownership?: OwnershipRule;
}

export interface RouteMatch {
  readonly route: RouteSpec;
  /** Allowed for this method? When false, `route.methods` goes in the Allow header (405). */
  readonly methodAllowed: boolean;
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

const modelInPath = { check: 'path', kind: 'model', param: 'model_id' } as const;
const jobInPath = { check: 'path', kind: 'training_job', param: 'training_job_id' } as const;

/** The route table of SPEC 4 and the seed document. */
export const ROUTES: readonly RouteSpec[] = [
  { template: '/v1/chat/completions', methods: ['POST'], upstream: 'service', body: 'chat', limited: true, metering: 'tokens', ownership: { check: 'chat-model' } },
  { template: '/v1/models', methods: ['GET'], upstream: 'inference', body: 'none', limited: true, metering: 'requests' },
  // A model creation is a small JSON body, read whole: its name is checked before it is forwarded.
  preview('/v1/preview/models', ['POST'], { body: 'json', ownership: { check: 'create-model' } }),
  preview('/v1/preview/models/{model_id}', ['DELETE'], { ownership: { ...modelInPath, release: true } }),
  preview('/v1/preview/models/{model_id}/checkpoints', ['GET', 'DELETE'], { ownership: modelInPath }),
  preview('/v1/preview/models/{model_id}/log', ['POST'], { ownership: modelInPath }),
  preview('/v1/preview/training-jobs', ['POST'], { trainingJobKind: 'rl', ownership: { check: 'create-job' } }),
  preview('/v1/preview/sft-training-jobs', ['POST'], { trainingJobKind: 'sft', ownership: { check: 'create-job' } }),
  preview('/v1/preview/training-jobs/{training_job_id}', ['GET'], { ownership: jobInPath }),
  preview('/v1/preview/training-jobs/{training_job_id}/events', ['GET'], { ownership: jobInPath }),
  // Health needs a key like every /v1 route, but is neither limited nor metered: probes must not eat quota.
  { template: '/v1/health', methods: ['GET'], upstream: 'service', body: 'none', limited: false, metering: 'none' },
  { template: '/v1/system-check', methods: ['GET'], upstream: 'service', body: 'none', limited: false, metering: 'none' },
];

/** Compiles a template to a regex once: `{param}` is one non-empty segment; a trailing slash is allowed and kept. */
function compile(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/**
 * The value of a `{param}` of a route's template in a path, percent-decoded as the upstream's
 * framework decodes it (so the gateway checks the id the upstream will act on); undefined when
 * the path does not match or does not decode.
 */
export function pathParam(template: string, path: string, param: string): string | undefined {
  let pattern = paramPatterns.get(template);
  if (!pattern) {
    const source = template
      .split('/')
      .map((segment) => (segment.startsWith('{') ? `(?<${segment.slice(1, -1)}>[^/]+)` : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('/');
    pattern = new RegExp(`^${source}/?$`);
    paramPatterns.set(template, pattern);
  }
  const raw = pattern.exec(path)?.groups?.[param];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

const paramPatterns = new Map<string, RegExp>();

export interface RouteTable {
  /** Every route of the table, in order: what per-route chains are built from. */
  readonly routes: readonly RouteSpec[];
  /** The route for a path (no query string), or undefined for 404. */
  match(path: string, method: string): RouteMatch | undefined;
}

export function createRouteTable(routes: readonly RouteSpec[] = ROUTES): RouteTable {
  const compiled = routes.map((route) => ({ route, pattern: compile(route.template) }));
  return {
    routes,
    match(path, method) {
      // Several templates can share a path (none today); the method decides between them.
      let fallback: RouteSpec | undefined;
      for (const { route, pattern } of compiled) {
        if (!pattern.test(path)) continue;
        if (route.methods.includes(method)) return { route, methodAllowed: true };
        fallback ??= route;
      }
      return fallback ? { route: fallback, methodAllowed: false } : undefined;
    },
  };
}

/**
 * The route a request URL addresses, or the 400 (unsafe path), 404 (no route) or 405 (with
 * `Allow`) to answer instead. Nothing is forwarded for a request this throws on.
 */
export function resolveRoute(table: RouteTable, method: string, url: string): RouteSpec {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  assertSafePath(path);
  const match = table.match(path, method);
  if (!match) throw errors.routeNotFound(method, path);
  if (!match.methodAllowed) {
    const allowed = match.route.methods.join(', ');
    throw errors.methodNotAllowed(method, match.route.template, allowed);
  }
  return match.route;
}

const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

/**
 * Rejects paths that could address something other than what they appear to: `..`/`.` segments
 * (raw or percent-encoded) and encoded slashes or backslashes, which upstream frameworks may
 * decode into a different route. Such requests are answered 400 and never forwarded.
 */
export function assertSafePath(path: string): void {
  if (path.includes('\\')) throw unsafePath('a backslash');
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment)) throw unsafePath('a "." or ".." segment');
    if (ENCODED_SEPARATOR.test(segment)) throw unsafePath('an encoded slash');
  }
  // An id that does not decode is one no upstream can act on as sent (SPEC 9: a 4xx, never forwarded).
  if (path.includes('%') && !decodes(path)) throw malformedPathEncoding();
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
