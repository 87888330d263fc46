import { DAY_MS, dayStart } from '../calendar.js';
import { GatewayError } from '../errors.js';
import type { UsageGroupBy, UsageQuery } from '../metering/index.js';
import { isValidName, NAME_RULE } from '../projects/name.js';

/** Longest range one query may cover, in days (inclusive): a leap year. */
const MAX_QUERY_DAYS = 366;
const PARAMETERS = new Set(['from', 'to', 'team', 'project', 'groupBy']);
const GROUP_BY: ReadonlySet<string> = new Set<UsageGroupBy>(['model', 'key', 'day']);

const invalid = (param: string, message: string): GatewayError => new GatewayError(400, 'invalid_query', message, {}, param);

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
  if (value !== undefined && !isValidName(value)) {
    throw invalid(name, `Query parameter "${name}" must be ${NAME_RULE}, got "${value}".`);
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
