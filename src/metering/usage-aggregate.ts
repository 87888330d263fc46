import { DAY_MS, dayStart, utcDay } from '../calendar.js';
import type { UsageCounts, UsageRecord } from './usage-record.js';

export type UsageGroupBy = 'model' | 'key' | 'day';

/** A validated usage query (SPEC 7): an inclusive UTC day range plus optional filters. */
export interface UsageQuery {
  from: string;
  to: string;
  team?: string;
  project?: string;
  groupBy?: UsageGroupBy;
}

/** One line of the admin answer: team + project, plus the groupBy dimension when asked for. */
export interface UsageRow extends UsageCounts {
  team: string;
  project: string;
  model?: string;
  key?: string;
  day?: string;
}

/** Every day from `from` to `to`, inclusive, in order (both already validated). */
export function daysInRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = dayStart(from), last = dayStart(to); ms <= last; ms += DAY_MS) days.push(utcDay(ms));
  return days;
}

/** True when a stored team/project pair passes the query's filters. */
export function matchesQuery(query: UsageQuery, team: string, project: string): boolean {
  return (query.team === undefined || query.team === team) && (query.project === undefined || query.project === project);
}

const dimensionOf = (cell: UsageRecord, groupBy: UsageGroupBy | undefined): string | undefined =>
  groupBy === 'model' ? cell.model : groupBy === 'key' ? cell.keyId : groupBy === 'day' ? cell.day : undefined;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sums cells (already filtered by day range, team and project) into the rows the admin API
 * answers, sorted by team, project, then the groupBy dimension (code-unit order).
 */
export function aggregateUsage(cells: Iterable<UsageRecord>, groupBy: UsageGroupBy | undefined): UsageRow[] {
  const rows = new Map<string, { row: UsageRow; dimension: string }>();
  for (const cell of cells) {
    const dimension = dimensionOf(cell, groupBy) ?? '';
    const id = JSON.stringify([cell.team, cell.project, dimension]);
    let entry = rows.get(id);
    if (entry === undefined) {
      // Built in one literal so JSON keys come out in the documented order.
      const row: UsageRow = {
        team: cell.team,
        project: cell.project,
        ...(groupBy === undefined ? {} : { [groupBy]: dimension }),
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
      };
      entry = { row, dimension };
      rows.set(id, entry);
    }
    entry.row.requests += cell.requests;
    entry.row.prompt_tokens += cell.prompt_tokens;
    entry.row.completion_tokens += cell.completion_tokens;
    entry.row.total_tokens += cell.total_tokens;
  }
  return [...rows.values()]
    .sort((a, b) => compare(a.row.team, b.row.team) || compare(a.row.project, b.row.project) || compare(a.dimension, b.dimension))
    .map((entry) => entry.row);
}
