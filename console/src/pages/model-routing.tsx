import type { ModelRouting } from '../api.js';
import { DataTable } from '../ui/widgets.js';

/** An upstream's health in words: how many of its targets take traffic, and which are out. */
function health(routing: ModelRouting | undefined, upstream: string): string {
  const pool = routing?.upstreams[upstream];
  if (pool === undefined) return '—';
  const out = pool.targets.filter((target) => target.state !== 'up').map((target) => `${target.target} ${target.state}`);
  return `${pool.up}/${pool.targets.length} up${out.length > 0 ? ` (${out.join(', ')})` : ''}`;
}

/** SPEC 22 on the Models page: routes in order, aliases, fallbacks, each with its upstream's health. */
export function ModelRoutingTables({ routing, loading }: { readonly routing: ModelRouting | undefined; readonly loading: boolean }) {
  const empty = (none: string): string => (loading ? 'Loading…' : none);
  return (
    <>
      <DataTable
        caption="Model routes"
        rows={routing?.routes ?? []}
        rowKey={(route) => `${route.match}\n${route.upstream}\n${route.default}`}
        empty={empty('No routes.')}
        columns={[
          { label: 'Model', cell: (route) => (route.default ? 'anything else' : <code>{route.match}</code>) },
          { label: 'Upstream', cell: (route) => route.upstream },
          { label: 'Health', cell: (route) => health(routing, route.upstream) },
        ]}
      />
      <DataTable
        caption="Model aliases"
        rows={routing?.aliases ?? []}
        rowKey={(alias) => alias.alias}
        empty={empty('No aliases.')}
        columns={[
          { label: 'Alias', cell: (alias) => <code>{alias.alias}</code> },
          { label: 'Model', cell: (alias) => <code>{alias.target}</code> },
          { label: 'Upstream', cell: (alias) => alias.upstream },
          { label: 'Health', cell: (alias) => health(routing, alias.upstream) },
        ]}
      />
      <DataTable
        caption="Model fallbacks"
        rows={routing?.fallbacks ?? []}
        rowKey={(fallback) => fallback.model}
        empty={empty('No fallbacks.')}
        columns={[
          { label: 'Model', cell: (fallback) => <code>{fallback.model}</code> },
          { label: 'Falls back to', cell: (fallback) => fallback.to.map((to) => `${to.model} → ${to.upstream} (${health(routing, to.upstream)})`).join('; ') },
        ]}
      />
    </>
  );
}
