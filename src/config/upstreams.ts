import { z } from 'zod';

/**
 * The built-in upstreams, by their config name (`upstreams.<name>`): each is always configured
 * and has an environment override of its URL. Any other name under `upstreams:` is a named
 * upstream (SPEC 22): a pool like these, which config routes and `models.routes` may name.
 */
export const UPSTREAMS = {
  /** The training service: chat completions, training resources, health (SPEC 4). */
  service: { urlVariable: 'SERVICE_URL' },
  /** The inference host: the models an account can use. */
  inference: { urlVariable: 'INFERENCE_URL' },
} as const satisfies Record<string, { readonly urlVariable: string }>;

/** An upstream's config name: a built-in one or any name under `upstreams:` (checked at load). */
export type UpstreamName = string;

export const UPSTREAM_NAMES = Object.keys(UPSTREAMS) as readonly (keyof typeof UPSTREAMS)[];

/** What a named upstream may be called: it is a metric label and a YAML key. */
export const UPSTREAM_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const UPSTREAM_NAME_RULE = 'letters, digits, _ . - (at most 64, starting with a letter or digit)';

/** A reference to an upstream (a route's `upstream`): its name's shape here, that it exists in upstreamRefusals. */
export const upstreamReference = z.string().regex(UPSTREAM_NAME_PATTERN, `must be an upstream name: ${UPSTREAM_NAME_RULE}`);

/** `upstreams:`: the built-in ones (required) and any named ones, each of the same shape. */
export function upstreamsSchema<T extends z.ZodType>(one: T) {
  return z
    .object({ service: one, inference: one })
    .catchall(one)
    .superRefine((upstreams, ctx) => {
      for (const name of Object.keys(upstreams)) {
        if (!UPSTREAM_NAME_PATTERN.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: `an upstream name is ${UPSTREAM_NAME_RULE}` });
      }
    });
}

/** Where the configuration names an upstream, with the key path of each mention. */
export interface UpstreamMentions {
  readonly upstreams: Readonly<Record<string, unknown>>;
  readonly routes: readonly { readonly upstream: string }[];
  readonly models: { readonly routes: readonly { readonly upstream: string }[] };
  readonly tracing: { readonly providerNames: Readonly<Record<string, string>> };
}

/** Each mention of an upstream that is not configured: its key path and the message (SPEC 22). */
export function upstreamRefusals(config: UpstreamMentions): Array<{ path: (string | number)[]; message: string }> {
  const known = Object.keys(config.upstreams);
  const refusal = (name: string): string => `unknown upstream "${name}" (configured: ${known.join(', ')})`;
  const found: Array<{ path: (string | number)[]; message: string }> = [];
  config.routes.forEach((route, i) => {
    if (!Object.hasOwn(config.upstreams, route.upstream)) found.push({ path: ['routes', i, 'upstream'], message: refusal(route.upstream) });
  });
  config.models.routes.forEach((route, i) => {
    if (!Object.hasOwn(config.upstreams, route.upstream)) found.push({ path: ['models', 'routes', i, 'upstream'], message: refusal(route.upstream) });
  });
  for (const name of Object.keys(config.tracing.providerNames)) {
    if (!Object.hasOwn(config.upstreams, name)) found.push({ path: ['tracing', 'providerNames', name], message: refusal(name) });
  }
  return found;
}
