import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { DAY_MS, dayRange } from '../../calendar.js';
import { timeLeft } from '../core/deadline.js';
import type { SqlDialect } from '../core/dialect.js';
import type { UsageAggregate, UsageAggregateQuery, UsageGroupBy } from '../core/durable-store.js';
import { toNumber } from '../core/rows.js';
import type { Database } from '../core/schema.js';

/** The SQL of each groupBy dimension over ledger_daily; the name is also the field of the answer. */
function dimension(groupBy: UsageGroupBy): RawBuilder<string> {
  switch (groupBy) {
    case 'model':
      return sql<string>`${sql.ref('model')}`;
    case 'key':
      return sql<string>`${sql.ref('key_id')}`;
    case 'day':
      return sql<string>`${sql.ref('day')}`;
    case 'month':
      return sql<string>`substr(${sql.ref('day')}, 1, 7)`;
    case 'route':
      return sql<string>`${sql.ref('method')} || ' ' || ${sql.ref('route')}`;
  }
}

/**
 * Sums over the inclusive days `[first, last]` per team, project and dimension (`dim` is ''
 * without groupBy), from ledger_daily: the rows are summed per day as they are written, so a
 * month of a million rows is read as its few thousand daily cells.
 */
async function sumSlice(db: Kysely<Database>, query: UsageAggregateQuery, first: string, last: string) {
  const groupBy = query.groupBy;
  return db
    .selectFrom('ledger_daily')
    .select(['team', 'project'])
    .select(groupBy === undefined ? sql<string>`''`.as('dim') : dimension(groupBy).as('dim'))
    .select((eb) => [
      eb.fn.sum<number | string>('requests').as('requests'),
      eb.fn.sum<number | string>('prompt_tokens').as('prompt'),
      eb.fn.sum<number | string>('completion_tokens').as('completion'),
      eb.fn.sum<number | string>('total_tokens').as('total'),
      eb.fn.sum<number | string>('cost_nanos').as('cost'),
    ])
    .where('day', '>=', first)
    .where('day', '<=', last)
    .$if(query.team !== undefined, (q) => q.where('team', '=', query.team!))
    .$if(query.project !== undefined, (q) => q.where('project', '=', query.project!))
    .$if(query.key !== undefined, (q) => q.where('key_id', '=', query.key!))
    .groupBy(['team', 'project'])
    .$if(groupBy !== undefined, (q) => q.groupBy(sql.ref('dim')))
    .execute();
}

/** The inclusive days whole, or day by day where the driver blocks the event loop (every dimension is a function of the day's cell, so sums add up). */
export function daySlices(dialect: SqlDialect, start: string, end: string): Array<[string, string]> {
  const last = new Date(Date.parse(end) - DAY_MS).toISOString().slice(0, 10);
  if (!dialect.blocksEventLoop) return [[start.slice(0, 10), last]];
  const result: Array<[string, string]> = [];
  for (let ms = Date.parse(start); ms < Date.parse(end); ms += DAY_MS) {
    const day = new Date(ms).toISOString().slice(0, 10);
    result.push([day, day]);
  }
  return result;
}

/** Code-unit order, the same on both databases (collations differ; the answer is small). */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sums per team/project (and dimension) over the inclusive UTC days; exact integer costs. */
export async function aggregateLedger(db: Kysely<Database>, dialect: SqlDialect, query: UsageAggregateQuery): Promise<UsageAggregate[]> {
  const { start, end } = dayRange(query.from, query.to);
  const groupBy = query.groupBy;
  const totals = new Map<string, UsageAggregate>();
  for (const [first, last] of daySlices(dialect, start, end)) {
    // Between synchronous SQLite statements: let requests run, and stop once the caller gave up.
    if (dialect.blocksEventLoop) await nextTurn();
    const left = timeLeft();
    if (left.ms <= 0) throw left.error();
    for (const row of await sumSlice(db, query, first, last)) {
      const cell = `${row.team}\u0000${row.project}\u0000${row.dim}`;
      let total = totals.get(cell);
      if (!total) {
        total = { team: row.team, project: row.project, ...(groupBy === undefined ? {} : { [groupBy]: row.dim }), requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, costNanos: 0 };
        totals.set(cell, total);
      }
      total.requests += toNumber(row.requests);
      total.promptTokens += toNumber(row.prompt);
      total.completionTokens += toNumber(row.completion);
      total.totalTokens += toNumber(row.total);
      total.costNanos += toNumber(row.cost);
    }
  }
  const dimOf = (a: UsageAggregate): string => (groupBy === undefined ? '' : (a[groupBy] ?? ''));
  return [...totals.values()].sort((a, b) => byCodeUnits(a.team, b.team) || byCodeUnits(a.project, b.project) || byCodeUnits(dimOf(a), dimOf(b)));
}
