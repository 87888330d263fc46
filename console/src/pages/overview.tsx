import { useMemo } from 'preact/hooks';
import { adminUrl, call, type Overview, type Totals } from '../api.js';
import { DayChart } from '../ui/chart.js';
import { seriesByTeam, type DaySeries } from '../ui/series.js';
import { daysAgo, formatCost, formatCount, percent } from '../ui/format.js';
import { useLoad } from '../ui/load.js';
import { DataTable, LoadError, Panel } from '../ui/widgets.js';

function TotalsCard({ title, totals }: { readonly title: string; readonly totals: Totals }) {
  return (
    <section class="card" aria-label={title}>
      <h2>{title}</h2>
      <dl>
        <div><dt>Requests</dt><dd data-testid={`${title}-requests`}>{formatCount(totals.requests)}</dd></div>
        <div><dt>Tokens</dt><dd>{formatCount(totals.tokens)}</dd></div>
        <div><dt>Cost</dt><dd>{formatCost(totals.cost)}</dd></div>
      </dl>
    </section>
  );
}

/** The 30 days ending today, each day's cost per team (0 where a team spent nothing). */
function costSeries(overview: Overview): { days: string[]; series: DaySeries[] } {
  const days = Array.from({ length: 30 }, (_, i) => daysAgo(29 - i));
  const series = seriesByTeam(days, overview.costPerDay);
  return { days: series.length === 0 ? [] : days, series };
}

function TopTable({ caption, rows }: { readonly caption: string; readonly rows: ReadonlyArray<{ readonly name: string; readonly cost: string | number }> }) {
  return <DataTable caption={caption} rows={rows} rowKey={(row) => row.name} columns={[{ label: 'Name', cell: (row) => row.name }, { label: 'Cost', cell: (row) => formatCost(row.cost), numeric: true }]} />;
}

/** The page's one read (the shell starts it at sign-in: see prefetch). */
export const OVERVIEW_READ = adminUrl('overview');

/** Overview (SPEC 17): today and this month, cost per day by team, the top spenders, the last hour's refusals and errors. */
export function OverviewPage() {
  const overview = useLoad(() => call<Overview>(OVERVIEW_READ), []);
  const chart = useMemo(() => (overview.data === null ? null : costSeries(overview.data)), [overview.data]);
  const data = overview.data;
  if (data === null) return overview.loading ? <p role="status">Loading…</p> : <LoadError error={overview.error} />;
  const hour = data.lastHour;
  return (
    <>
      <LoadError error={overview.error} />
      <div class="cards">
        <TotalsCard title="Today" totals={data.today} />
        <TotalsCard title="This month" totals={data.month} />
        <section class="card" aria-label="Last hour">
          <h2>Last hour</h2>
          <dl>
            <div><dt>Requests</dt><dd>{formatCount(hour.requests)}</dd></div>
            <div><dt>Refused (429)</dt><dd>{percent(hour.rejected429, hour.requests)}</dd></div>
            <div><dt>Upstream errors</dt><dd>{percent(hour.upstreamErrors, hour.requests)}</dd></div>
          </dl>
        </section>
      </div>
      <Panel title={`Cost per day, last 30 days, by team (${data.currency})`}>
        {chart !== null && <DayChart label="Cost per day for the last 30 days, stacked by team" days={chart.days} series={chart.series} format={formatCost} />}
      </Panel>
      <div class="columns">
        <TopTable caption="Top teams by cost" rows={data.top.teams} />
        <TopTable caption="Top projects by cost" rows={data.top.projects} />
        <TopTable caption="Top models by cost" rows={data.top.models} />
      </div>
    </>
  );
}
