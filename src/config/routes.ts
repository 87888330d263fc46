import { z } from 'zod';
import { jsonPointerProblem } from '../json-pointer.js';
import { templateProblem } from '../route-template.js';
import { upstreamReference } from './upstreams.js';

/*
 * `routes:` (SPEC 20): routes the operator adds to the built-in table without a release. The shape
 * of each is checked here; what needs the built-in table and the ownership policy (overlap, an
 * unguarded service route) is checked by proxy/ when the route table is built. Either way a bad
 * one is the one-line config error with its key path at start-up and a 400 invalid_config on
 * reload (the running table kept).
 */

/** A resource kind: what the ownership registry and /admin/resources name it by (stored as text). */
export const RESOURCE_KIND_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
const kind = z.string().regex(RESOURCE_KIND_PATTERN, 'must be a resource kind: a lowercase letter, then up to 62 of a-z 0-9 _');
const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a name of letters, digits and _');

export const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** A JSON pointer (RFC 6901) into a 2xx answer: where the id is (`/run_id`). */
const pointer = z.string().superRefine((text, ctx) => {
  const problem = jsonPointerProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
/** A resource named in an answer: `{ kind, id: <pointer> }` (id default `/id`). */
const answerId = z.object({ kind, id: pointer.default('/id') }).strict();

const ownershipSchema = z.union([
  z.literal('unguarded'),
  z
    .object({
      // `creates: run` is `creates: { kind: run, id: /id }`.
      creates: z.union([kind, answerId]).optional(),
      checks: z.object({ param: identifier, kind }).strict().optional(),
      'checks-body': z.object({ field: z.string().min(1).max(128), kind }).strict().optional(),
      'checks-response': answerId.optional(),
    })
    .strict()
    .refine(
      (rule) => rule.creates !== undefined || rule.checks !== undefined || rule['checks-body'] !== undefined || rule['checks-response'] !== undefined,
      'name creates, checks, checks-body or checks-response (or say unguarded)',
    ),
]);

/** A path template (route-template.ts): `/v1/...`, literal and `{name}` segments, a last `:verb`, optionally a trailing `/*`. */
const templateSchema = z.string().superRefine((path, ctx) => {
  const problem = templateProblem(path);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const routeConfigSchema = z
  .object({
    path: templateSchema,
    methods: z.array(z.enum(ROUTE_METHODS, { error: `must be one of ${ROUTE_METHODS.join(', ')}` })).min(1, 'must name at least one method'),
    upstream: upstreamReference,
    body: z.enum(['stream', 'json', 'none']).default('stream'),
    limited: z.boolean().default(true),
    /** A ledger row per request; default: as `limited` (a status poll: `limited: false, ledger: true`). */
    ledger: z.boolean().optional(),
    ownership: ownershipSchema.optional(),
    /** A top-level body field naming a model the caller must be allowed to use (SPEC 21); the body is read whole. */
    'checks-model': z.string().min(1).max(128).optional(),
  })
  .strict()
  .superRefine((route, ctx) => {
    if (route['checks-model'] !== undefined && route.body !== 'json') {
      ctx.addIssue({ code: 'custom', path: ['checks-model'], message: 'reads the body whole: needs body: json' });
    }
    if (new Set(route.methods).size !== route.methods.length) ctx.addIssue({ code: 'custom', path: ['methods'], message: 'names a method twice' });
    const params = new Set((route.path.match(/\{[^}]+\}/g) ?? []).map((p) => p.slice(1, -1)));
    const rule = route.ownership;
    if (rule === undefined || rule === 'unguarded') return;
    if (rule.checks && !params.has(rule.checks.param)) {
      ctx.addIssue({ code: 'custom', path: ['ownership', 'checks', 'param'], message: `"${rule.checks.param}" is not a {parameter} of ${route.path}` });
    }
    if (rule['checks-body'] && route.body !== 'stream') {
      ctx.addIssue({ code: 'custom', path: ['ownership', 'checks-body'], message: 'reads the body as it streams: needs body: stream' });
    }
  });
export type RouteConfig = z.infer<typeof routeConfigSchema>;

export const routesSchema = z
  .array(routeConfigSchema)
  .nullish()
  .transform((v) => v ?? []);
