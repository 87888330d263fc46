import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SqlDialect } from './dialect.js';
import type { UsageAggregate, UsageAggregateQuery, UsageGroupBy } from './durable-store.js';
import { toNumber } from './rows.js';
import type { Database } from './schema.js';
import { dayRange } from './utc-days.js';

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

/** Code-unit order, the same on both databases (collations differ; the answer is small). */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sums per team/project (and dimension) over the inclusive UTC days; exact integer costs. */
export async function aggregateLedger(db: Kysely<Database>, dialect: SqlDialect, query: UsageAggregateQuery): Promise<UsageAggregate[]> {
  const { start, end } = dayRange(query.from, query.to);
  const groupBy = query.groupBy;
  const rows = await db
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
  const aggregates = rows.map((row) => ({
    team: row.team,
    project: row.project,
    ...(groupBy === undefined ? {} : { [groupBy]: row.dim }),
    requests: toNumber(row.requests),
    promptTokens: toNumber(row.prompt),
    completionTokens: toNumber(row.completion),
    totalTokens: toNumber(row.total),
    costNanos: toNumber(row.cost),
  }));
  const dimOf = (a: UsageAggregate): string => (groupBy === undefined ? '' : (a[groupBy] ?? ''));
  return aggregates.sort((a, b) => byCodeUnits(a.team, b.team) || byCodeUnits(a.project, b.project) || byCodeUnits(dimOf(a), dimOf(b)));
}
