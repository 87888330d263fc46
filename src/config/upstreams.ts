/**
 * The upstreams the gateway forwards to, by their config name (`upstreams.<name>`): one entry an
 * upstream. The config schema, the environment overrides, the pools built per configuration and
 * the metric labels all follow from this table; a route names its upstream by the same key.
 */
export const UPSTREAMS = {
  /** The training service: chat completions, training resources, health (SPEC 4). */
  service: { urlVariable: 'SERVICE_URL' },
  /** The inference host: the models an account can use. */
  inference: { urlVariable: 'INFERENCE_URL' },
} as const satisfies Record<string, { readonly urlVariable: string }>;

export type UpstreamName = keyof typeof UPSTREAMS;

export const UPSTREAM_NAMES = Object.keys(UPSTREAMS) as readonly UpstreamName[];

/** One value per upstream, built by `build` from its name. */
export function perUpstream<T>(build: (name: UpstreamName) => T): Record<UpstreamName, T> {
  return Object.fromEntries(UPSTREAM_NAMES.map((name) => [name, build(name)])) as Record<UpstreamName, T>;
}
