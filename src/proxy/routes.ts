import { GatewayError } from '../errors.js';

export type UpstreamName = 'service' | 'inference';

/**
 * What the gateway does with a request body:
 * - `chat`: buffered (up to `server.bodyLimit`), validated (422 on failure), forwarded as the original bytes;
 * - `stream`: streamed through untouched, counted against `server.streamBodyLimit` (413 past it);
 * - `none`: no body expected; whatever is sent passes through as it comes.
 */
export type BodyHandling = 'chat' | 'stream' | 'none';

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

/** The route table of SPEC 4 and the seed document. */
export const ROUTES: readonly RouteSpec[] = [
  { template: '/v1/chat/completions', methods: ['POST'], upstream: 'service', body: 'chat', limited: true, metering: 'tokens' },
  { template: '/v1/models', methods: ['GET'], upstream: 'inference', body: 'none', limited: true, metering: 'requests' },
  preview('/v1/preview/models', ['POST']),
  preview('/v1/preview/models/{model_id}', ['DELETE']),
  preview('/v1/preview/models/{model_id}/checkpoints', ['GET', 'DELETE']),
  preview('/v1/preview/models/{model_id}/log', ['POST']),
  preview('/v1/preview/training-jobs', ['POST'], { trainingJobKind: 'rl' }),
  preview('/v1/preview/sft-training-jobs', ['POST'], { trainingJobKind: 'sft' }),
  preview('/v1/preview/training-jobs/{training_job_id}', ['GET']),
  preview('/v1/preview/training-jobs/{training_job_id}/events', ['GET']),
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

export interface RouteTable {
  /** The route for a path (no query string), or undefined for 404. */
  match(path: string, method: string): RouteMatch | undefined;
}

export function createRouteTable(routes: readonly RouteSpec[] = ROUTES): RouteTable {
  const compiled = routes.map((route) => ({ route, pattern: compile(route.template) }));
  return {
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
  if (!match) throw new GatewayError(404, 'not_found', `No route for ${method} ${path}.`);
  if (!match.methodAllowed) {
    const allowed = match.route.methods.join(', ');
    throw new GatewayError(405, 'method_not_allowed', `${method} is not allowed on ${match.route.template}; use ${allowed}.`, { allow: allowed });
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
}

function unsafePath(what: string): GatewayError {
  return new GatewayError(400, 'invalid_path', `The request path contains ${what}, which is not allowed.`);
}
