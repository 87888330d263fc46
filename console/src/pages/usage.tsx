import { useMemo, useState } from 'preact/hooks';
import { adminUrl, call, type List, type Session, type UsageRow } from '../api.js';
import { DayChart } from '../ui/chart.js';
import { seriesByTeam } from '../ui/series.js';
import { FilterForm, teamFilter, type Filters } from '../ui/filters.js';
import { formatCost, formatCount, thisMonth } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { DataTable, errorsFromApi, LoadError, Panel } from '../ui/widgets.js';

const GROUPS = [['', 'Team and project'], ['model', 'Model'], ['key', 'Key'], ['day', 'Day'], ['month', 'Month'], ['route', 'Route']] as const;
const FIELDS = ['from', 'to', 'team', 'project', 'key', 'groupBy'];

type Usage = List<UsageRow> & { readonly currency: string };

/** Days of the range with each team's cost (from a groupBy=day query). */
function costByDay(rows: readonly UsageRow[], from: string, to: string) {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return { days: rows.length === 0 ? [] : days, series: seriesByTeam(days, rows) };
}

/** Usage (SPEC 17): a date range, filters and group-by; a chart of cost per day, a table, a CSV download. */
export function UsagePage({ session }: { readonly session: Session }) {
  const [filters, setFilters] = useState<Filters>({ ...thisMonth(), team: '', project: '', key: '', groupBy: '' });
  const usage = useLoad(() => call<Usage>(adminUrl('usage', filters)), [filters]);
  const daily = useLoad(() => call<Usage>(adminUrl('usage', { ...filters, groupBy: 'day' })), [filters]);
  const chart = useMemo(() => costByDay(daily.data?.data ?? [], filters.from!, filters.to!), [daily.data]);
  const group = filters.groupBy as (typeof GROUPS)[number][0];
  const currency = usage.data?.currency ?? '';
  return (
    <>
      <FilterForm
        label="Usage filters"
        initial={filters}
        fields={[...teamFilter(session), { name: 'project', label: 'Project', kind: 'name' }, { name: 'key', label: 'Key id', kind: 'text' }, { name: 'groupBy', label: 'Group by', kind: 'select', options: GROUPS }]}
        onApply={setFilters}
        apiErrors={usage.error === null ? {} : errorsFromApi(usage.error, FIELDS)}
      />
      <LoadError error={usage.error?.param ? null : usage.error} />
      <Panel title={`Cost per day${currency ? ` (${currency})` : ''}`} actions={<a class="button" href={adminUrl('usage', { ...filters, format: 'csv' })} download="usage.csv">Download CSV</a>}>
        {daily.data === null && daily.loading ? (
          <p role="status">Loading…</p>
        ) : (
          <DayChart label={`Cost per day from ${filters.from} to ${filters.to}, stacked by team`} days={chart.days} series={chart.series} format={formatCost} />
        )}
      </Panel>
      <DataTable
        caption={`Usage from ${filters.from} to ${filters.to}`}
        rows={usage.data?.data ?? []}
        rowKey={(row) => `${row.team}/${row.project}/${group === '' ? '' : String(row[group] ?? '')}`}
        empty={usage.loading ? 'Loading…' : 'No usage in this range.'}
        columns={[
          { label: 'Team', cell: (row) => row.team },
          { label: 'Project', cell: (row) => row.project },
          ...(group === '' ? [] : [{ label: GROUPS.find(([value]) => value === group)![1], cell: (row: UsageRow) => String(row[group] ?? '') }]),
          { label: 'Requests', cell: (row) => formatCount(row.requests), numeric: true },
          { label: 'Tokens', cell: (row) => formatCount(row.total_tokens), numeric: true },
          { label: 'Cost', cell: (row) => formatCost(row.cost), numeric: true },
        ]}
      />
    </>
  );
}
