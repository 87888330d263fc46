import { GatewayError } from '../errors.js';

export type UsageGroupBy = 'model' | 'key' | 'day';

/** A validated admin usage query (SPEC 7): an inclusive UTC day range plus optional filters. */
export interface UsageQuery {
  from: string;
  to: string;
  team?: string;
  project?: string;
  groupBy?: UsageGroupBy;
}

export interface UsageCounts {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One line of the admin answer: team + project, plus the groupBy dimension when asked for. */
export interface UsageRow extends UsageCounts {
  team: string;
  project: string;
  model?: string;
  key?: string;
  day?: string;
}

/** The finest grain the stores keep: one UTC day × team × project × model × key. */
export interface UsageCell extends UsageCounts {
  day: string;
  team: string;
  project: string;
  model: string;
  keyId: string;
}

/** Longest range one query may cover, in days (inclusive): a leap year. */
export const MAX_QUERY_DAYS = 366;
const DAY_MS = 86_400_000;
const PARAMETERS = new Set(['from', 'to', 'team', 'project', 'groupBy']);
const GROUP_BY: ReadonlySet<string> = new Set<UsageGroupBy>(['model', 'key', 'day']);
const NAME_PART = /^[A-Za-z0-9._-]{1,128}$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

const invalid = (param: string, message: string): GatewayError => new GatewayError(400, 'invalid_query', message, {}, param);

/** Midnight UTC of a `YYYY-MM-DD` day in ms, or NaN when it is not a real calendar day. */
function dayStart(day: string): number {
  const match = DAY.exec(day);
  if (!match) return NaN;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(ms).toISOString().startsWith(day) ? ms : NaN;
}

/** The UTC day (`YYYY-MM-DD`) of an instant. */
export function utcDay(ms: number = Date.now()): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every day from `from` to `to`, inclusive, in order (both already validated). */
export function daysInRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = dayStart(from), last = dayStart(to); ms <= last; ms += DAY_MS) days.push(utcDay(ms));
  return days;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(name, `Query parameter "${name}" must be given once, as a plain value.`);
  return value;
}

function requiredDay(query: Record<string, unknown>, name: 'from' | 'to'): string {
  const value = single(query, name);
  if (value === undefined) throw invalid(name, `Query parameter "${name}" is required (a UTC day, YYYY-MM-DD).`);
  if (Number.isNaN(dayStart(value))) throw invalid(name, `Query parameter "${name}" must be a calendar day as YYYY-MM-DD, got "${value}".`);
  return value;
}

function optionalName(query: Record<string, unknown>, name: 'team' | 'project'): string | undefined {
  const value = single(query, name);
  if (value !== undefined && !NAME_PART.test(value)) {
    throw invalid(name, `Query parameter "${name}" must be 1-128 of [A-Za-z0-9._-], got "${value}".`);
  }
  return value;
}

/**
 * Validates the query string of `GET /admin/usage`. Throws GatewayError 400 `invalid_query`
 * naming the parameter: unknown or repeated parameter, missing or impossible day, from after
 * to, a range over 366 days, a bad team/project name or an unknown groupBy.
 */
export function parseUsageQuery(query: Record<string, unknown>): UsageQuery {
  for (const name of Object.keys(query)) {
    if (!PARAMETERS.has(name)) throw invalid(name, `Unknown query parameter "${name}"; use from, to, team, project, groupBy.`);
  }
  const from = requiredDay(query, 'from');
  const to = requiredDay(query, 'to');
  const span = (dayStart(to) - dayStart(from)) / DAY_MS + 1;
  if (span < 1) throw invalid('from', `Query parameter "from" (${from}) is after "to" (${to}).`);
  if (span > MAX_QUERY_DAYS) throw invalid('to', `The range from ${from} to ${to} covers ${span} days; at most ${MAX_QUERY_DAYS} are allowed.`);
  const parsed: UsageQuery = { from, to };
  const team = optionalName(query, 'team');
  const project = optionalName(query, 'project');
  const groupBy = single(query, 'groupBy');
  if (team !== undefined) parsed.team = team;
  if (project !== undefined) parsed.project = project;
  if (groupBy !== undefined) {
    if (!GROUP_BY.has(groupBy)) throw invalid('groupBy', `Query parameter "groupBy" must be model, key or day, got "${groupBy}".`);
    parsed.groupBy = groupBy as UsageGroupBy;
  }
  return parsed;
}

/** True when a stored team/project pair passes the query's filters. */
export function matchesQuery(query: UsageQuery, team: string, project: string): boolean {
  return (query.team === undefined || query.team === team) && (query.project === undefined || query.project === project);
}

const dimensionOf = (cell: UsageCell, groupBy: UsageGroupBy | undefined): string | undefined =>
  groupBy === 'model' ? cell.model : groupBy === 'key' ? cell.keyId : groupBy === 'day' ? cell.day : undefined;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sums cells (already filtered by day range, team and project) into the rows the admin API
 * answers, sorted by team, project, then the groupBy dimension (code-unit order).
 */
export function aggregateUsage(cells: Iterable<UsageCell>, groupBy: UsageGroupBy | undefined): UsageRow[] {
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
