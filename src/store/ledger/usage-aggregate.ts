import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { DAY_MS, dayRange } from '../../calendar.js';
import { timeLeft } from '../core/deadline.js';
import type { SqlDialect } from '../core/dialect.js';
import type { UsageAggregate, UsageAggregateQuery, UsageGroupBy } from '../core/durable-store.js';
import { toNumber } from '../core/rows.js';
import type { Database } from '../core/schema.js';

/** The SQL of each groupBy dimension; the name is also the field of the answer. */
function dimension(groupBy: UsageGroupBy, dialect: SqlDialect): RawBuilder<string> {
  switch (groupBy) {
    case 'model':
      return sql<string>`${sql.ref('model')}`;
    case 'key':
      return sql<string>`${sql.ref('key_id')}`;
    case 'day':
      return dialect.utcDay('at');
    case 'month':
      return dialect.utcMonth('at');
    case 'route':
      return sql<string>`${sql.ref('method')} || ' ' || ${sql.ref('route')}`;
  }
}

/** Sums over `[start, end)` per team, project and dimension (`dim` is '' without groupBy). */
async function sumSlice(db: Kysely<Database>, dialect: SqlDialect, query: UsageAggregateQuery, start: string, end: string) {
  const groupBy = query.groupBy;
  return db
    .selectFrom('ledger')
    .select(['team', 'project'])
    .select(groupBy === undefined ? sql<string>`''`.as('dim') : dimension(groupBy, dialect).as('dim'))
    .select((eb) => [
      eb.fn.countAll<number | string>().as('requests'),
      eb.fn.sum<number | string>('prompt_tokens').as('prompt'),
      eb.fn.sum<number | string>('completion_tokens').as('completion'),
      eb.fn.sum<number | string>('total_tokens').as('total'),
      eb.fn.sum<number | string>('cost_nanos').as('cost'),
    ])
    .where('at', '>=', start)
    .where('at', '<', end)
    .$if(query.team !== undefined, (q) => q.where('team', '=', query.team!))
    .$if(query.project !== undefined, (q) => q.where('project', '=', query.project!))
    .$if(query.key !== undefined, (q) => q.where('key_id', '=', query.key!))
    .groupBy(['team', 'project'])
    .$if(groupBy !== undefined, (q) => q.groupBy(sql.ref('dim')))
    .execute();
}

/** `[start, end)` whole, or day by day where the driver blocks the event loop (every dimension is a function of the row, so sums add up). */
function slices(dialect: SqlDialect, start: string, end: string): Array<[string, string]> {
  if (!dialect.blocksEventLoop) return [[start, end]];
  const result: Array<[string, string]> = [];
  for (let ms = Date.parse(start); ms < Date.parse(end); ms += DAY_MS) result.push([new Date(ms).toISOString(), new Date(ms + DAY_MS).toISOString()]);
  return result;
}

/** Code-unit order, the same on both databases (collations differ; the answer is small). */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sums per team/project (and dimension) over the inclusive UTC days; exact integer costs. */
export async function aggregateLedger(db: Kysely<Database>, dialect: SqlDialect, query: UsageAggregateQuery): Promise<UsageAggregate[]> {
  const { start, end } = dayRange(query.from, query.to);
  const groupBy = query.groupBy;
  const totals = new Map<string, UsageAggregate>();
  for (const [sliceStart, sliceEnd] of slices(dialect, start, end)) {
    // Between synchronous SQLite statements: let requests run, and stop once the caller gave up.
    if (dialect.blocksEventLoop) await nextTurn();
    const left = timeLeft();
    if (left.ms <= 0) throw left.error();
    for (const row of await sumSlice(db, dialect, query, sliceStart, sliceEnd)) {
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
