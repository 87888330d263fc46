import type { Config } from './schema.js';

/**
 * Settings a running instance cannot change: the listener it is bound to, its connections to
 * Redis and the database (and the lease TTL its Redis store runs on), the metrics listener and
 * path, and the listener's own timeouts and caps. A reload lists them (`restartRequired`) and leaves them as they were.
 */
export const RESTART_REQUIRED: readonly string[] = [
  'server.host',
  'server.port',
  'server.headersTimeoutMs',
  'server.requestTimeoutMs',
  'server.keepAliveTimeoutMs',
  'server.maxConnections',
  'server.pressureHeadersTimeoutMs',
  'server.maxHeaderBytes',
  // The primary forked its workers at start-up.
  'server.workers',
  // The Redis store renews and lapses leases on the TTL it was built with.
  'rateLimits.concurrencyLeaseMs',
  'redis',
  'database',
  'metrics.port',
  'metrics.path',
  'metrics.maxTeamProjects',
  // The tracer provider and its exporter are built once, at start-up.
  'tracing',
];

export interface ConfigChanges {
  /** Setting paths (`section.key`) whose value differs, in config order. */
  readonly changed: readonly string[];
  /** Those of them that only a restart applies. */
  readonly restartRequired: readonly string[];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** What a reload from `before` to `after` changes, at the granularity of `section.key` (`auth.keys`, `upstreams.service`). */
export function diffConfig(before: Config, after: Config): ConfigChanges {
  const changed: string[] = [];
  for (const section of Object.keys(after) as Array<keyof Config>) {
    const a = before[section] as unknown;
    const b = after[section] as unknown;
    if (same(a, b)) continue;
    // A list (routes) changes as a whole: its entries have no names to list.
    if (typeof b !== 'object' || b === null || typeof a !== 'object' || a === null || Array.isArray(b)) {
      changed.push(section);
      continue;
    }
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (!same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) changed.push(`${section}.${key}`);
    }
  }
  const restartRequired = changed.filter((path) => RESTART_REQUIRED.some((r) => path === r || path.startsWith(`${r}.`)));
  return { changed, restartRequired };
}

/**
 * The configuration to run after a reload: the new one, with every restart-only setting kept
 * as the process started with it (so what runs never claims settings it does not apply).
 */
export function applicableConfig(running: Config, next: Config): Config {
  let applied = next;
  for (const path of RESTART_REQUIRED) applied = withValueAt(applied, path.split('.'), valueAt(running, path.split('.')));
  return applied;
}

function valueAt(source: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], source);
}

/** A copy of `target` with `value` at `path`, sharing every branch the path does not go through. */
function withValueAt<T>(target: T, path: readonly string[], value: unknown): T {
  const [key, ...rest] = path as [string, ...string[]];
  const node = target as Record<string, unknown>;
  return { ...node, [key]: rest.length === 0 ? value : withValueAt(node[key], rest, value) } as T;
}
