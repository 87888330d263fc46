import type { LedgerPageQuery, UsageAggregateQuery, UsageGroupBy } from '../store/index.js';
import { isValidName, NAME_RULE } from '../projects/index.js';
import { dayRange, invalidQuery, onlyParams, singleParam } from '../admin-requests/index.js';

/** Longest range one query may cover, in days (inclusive): a leap year. */
const MAX_QUERY_DAYS = 366;
const GROUP_BY: readonly UsageGroupBy[] = ['model', 'key', 'day', 'month', 'route'];
const KEY_ID = /^[\x21-\x7e]{1,200}$/;

function optionalName(query: Record<string, unknown>, name: 'team' | 'project'): string | undefined {
  const value = singleParam(query, name);
  if (value !== undefined && !isValidName(value)) {
    throw invalidQuery(name, `Query parameter "${name}" must be ${NAME_RULE}, got "${value}".`);
  }
  return value;
}

/** The filters both usage routes share: a day range, team, project, key. */
function filters(query: Record<string, unknown>): UsageAggregateQuery {
  const parsed: UsageAggregateQuery = dayRange(query, MAX_QUERY_DAYS);
  const team = optionalName(query, 'team');
  const project = optionalName(query, 'project');
  const key = singleParam(query, 'key');
  if (key !== undefined && !KEY_ID.test(key)) throw invalidQuery('key', 'Query parameter "key" must be a key id (visible ASCII, at most 200 characters).');
  if (team !== undefined) parsed.team = team;
  if (project !== undefined) parsed.project = project;
  if (key !== undefined) parsed.key = key;
  return parsed;
}

/** `GET /admin/usage` (SPEC 7): a day range, filters and groupBy; 400 `invalid_query` naming the parameter. */
export function parseUsageQuery(query: Record<string, unknown>): UsageAggregateQuery {
  onlyParams(query, ['from', 'to', 'team', 'project', 'key', 'groupBy', 'format']);
  const parsed: UsageAggregateQuery = filters(query);
  const groupBy = singleParam(query, 'groupBy');
  if (groupBy !== undefined) {
    if (!(GROUP_BY as readonly string[]).includes(groupBy)) {
      throw invalidQuery('groupBy', `Query parameter "groupBy" must be one of ${GROUP_BY.join(', ')}, got "${groupBy}".`);
    }
    parsed.groupBy = groupBy as UsageGroupBy;
  }
  return parsed;
}

/** `format=csv` (or `json`, the default). */
export function csvRequested(query: Record<string, unknown>): boolean {
  const format = singleParam(query, 'format');
  if (format !== undefined && format !== 'csv' && format !== 'json') throw invalidQuery('format', `Query parameter "format" must be csv or json, got "${format}".`);
  return format === 'csv';
}

/** `GET /admin/usage/requests` (SPEC 14.2): a day range, filters, `after` (a cursor) and `limit` 1..1000 (default 100). */
export function parseLedgerPageQuery(query: Record<string, unknown>): LedgerPageQuery {
  onlyParams(query, ['from', 'to', 'team', 'project', 'key', 'after', 'limit']);
  const parsed: LedgerPageQuery = { ...filters(query), limit: 100 };
  const limit = singleParam(query, 'limit');
  if (limit !== undefined) {
    const value = Number(limit);
    if (!/^\d+$/.test(limit) || value < 1 || value > 1000) throw invalidQuery('limit', `Query parameter "limit" must be a whole number from 1 to 1000, got "${limit}".`);
    parsed.limit = value;
  }
  const after = singleParam(query, 'after');
  if (after !== undefined) parsed.after = after;
  return parsed;
}
