import type { RequestHandler } from 'express';
import { DAY_MS, utcDay } from '../calendar.js';
import type { Ledger } from '../metering/index.js';
import { nanosToAmount } from '../money.js';
import { type StoreHandle, type UsageCell } from '../store/index.js';
import { storeFailure } from './audit.js';
import { invalidQuery, teamScopeOf } from '../admin-requests/index.js';

export interface OverviewDeps {
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  readonly currency: () => string;
}

/** Days of the cost-per-day chart, today included. */
const CHART_DAYS = 30;
/** Entries of each top list. */
const TOP = 5;
const HOUR_MS = 3_600_000;

interface Totals {
  requests: number;
  tokens: number;
  costNanos: number;
}

const totalsOf = (cells: readonly UsageCell[]): Totals =>
  cells.reduce((t, c) => ({ requests: t.requests + c.requests, tokens: t.tokens + c.totalTokens, costNanos: t.costNanos + c.costNanos }), { requests: 0, tokens: 0, costNanos: 0 });

const totalsBody = (t: Totals) => ({ requests: t.requests, tokens: t.tokens, cost: nanosToAmount(t.costNanos) });

/** Cost per name, summed in nano-units (exact), as `Map` in first-seen order. */
function costBy(cells: readonly UsageCell[], nameOf: (cell: UsageCell) => string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const cell of cells) sums.set(nameOf(cell), (sums.get(nameOf(cell)) ?? 0) + cell.costNanos);
  return sums;
}

/** The `TOP` highest costs, ties by name (code-unit order) so the answer is stable. */
function top(cells: readonly UsageCell[], nameOf: (cell: UsageCell) => string): Array<{ name: string; cost: number }> {
  return [...costBy(cells, nameOf)]
    .sort(([an, a], [bn, b]) => b - a || (an < bn ? -1 : an > bn ? 1 : 0))
    .slice(0, TOP)
    .map(([name, nanos]) => ({ name, cost: nanosToAmount(nanos) }));
}

/** Cost per day and team over the chart's days, in day then team order; days and teams without traffic are absent. */
function costPerDay(cells: readonly UsageCell[]): Array<{ day: string; team: string; cost: number }> {
  const sums = costBy(cells, (c) => `${c.day}\u0000${c.team}`);
  return [...sums.keys()].sort().map((key) => {
    const [day, team] = key.split('\u0000') as [string, string];
    return { day, team, cost: nanosToAmount(sums.get(key)!) };
  });
}

/**
 * `GET /admin/overview` (SPEC 17, the console's Overview): today's and this month's totals, cost
 * per day and team for 30 days, the top teams, projects and models of the month by cost, and the
 * last hour's 429s and 5xx. All UTC; money as /admin/usage answers it (a number in `currency`).
 * Read from the daily sums (per day and team; per team, project and model for the month) and the
 * last hour's rows; a team-admin's is its team's.
 */
export function overviewHandler(deps: OverviewDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      for (const name of Object.keys(req.query as Record<string, unknown>)) throw invalidQuery(name, `Unknown query parameter "${name}"; /admin/overview takes none.`);
      const now = Date.now();
      const today = utcDay(now);
      const month = today.slice(0, 7);
      const chartFrom = utcDay(now - (CHART_DAYS - 1) * DAY_MS);
      const team = teamScopeOf(res);
      const scope = team === undefined ? {} : { team };
      await deps.ledger.flush(now + 1000);
      const store = deps.handle.require();
      const [days, monthCells, lastHour] = await Promise.all([
        store.usageCells({ from: chartFrom < `${month}-01` ? chartFrom : `${month}-01`, to: today, ...scope, by: 'day-team' }),
        store.usageCells({ from: `${month}-01`, to: today, ...scope, by: 'team-project-model' }),
        store.recentOutcomes({ since: new Date(now - HOUR_MS).toISOString(), until: new Date(now + 1).toISOString(), ...scope }),
      ]);
      res.json({
        currency: deps.currency(),
        today: totalsBody(totalsOf(days.filter((c) => c.day === today))),
        month: totalsBody(totalsOf(days.filter((c) => c.day.startsWith(month)))),
        costPerDay: costPerDay(days.filter((c) => c.day >= chartFrom)),
        top: {
          teams: top(monthCells, (c) => c.team),
          projects: top(monthCells, (c) => `${c.team}/${c.project}`),
          models: top(monthCells, (c) => c.model),
        },
        lastHour,
      });
    } catch (err) {
      next(storeFailure(err));
    }
  };
}
