import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { dayRange } from '../../calendar.js';
import { daySlices } from './usage-aggregate.js';
import { timeLeft } from '../core/deadline.js';
import type { SqlDialect } from '../core/dialect.js';
import type { RecentOutcomes, RecentOutcomesQuery, UsageCell, UsageCellQuery } from '../core/durable-store.js';
import { toNumber } from '../core/rows.js';
import type { Database } from '../core/schema.js';

async function cellsOf(db: Kysely<Database>, team: string | undefined, first: string, last: string) {
  return db
    .selectFrom('ledger_daily')
    .select(['day', 'team', 'project', 'model'])
    .select((eb) => [
      eb.fn.sum<number | string>('requests').as('requests'),
      eb.fn.sum<number | string>('total_tokens').as('tokens'),
      eb.fn.sum<number | string>('cost_nanos').as('cost'),
    ])
    .where('day', '>=', first)
    .where('day', '<=', last)
    .$if(team !== undefined, (q) => q.where('team', '=', team!))
    .groupBy(['day', 'team', 'project', 'model'])
    .execute();
}

/**
 * Sums per UTC day, team, project and model over the inclusive days, from ledger_daily:
 * everything the console's Overview shows of a month and 30 days (SQLite: a day at a time,
 * letting requests run between its synchronous statements).
 */
export async function selectUsageCells(db: Kysely<Database>, dialect: SqlDialect, query: UsageCellQuery): Promise<UsageCell[]> {
  const { start, end } = dayRange(query.from, query.to);
  const cells: UsageCell[] = [];
  for (const [first, last] of daySlices(dialect, start, end)) {
    if (dialect.blocksEventLoop) await nextTurn();
    const left = timeLeft();
    if (left.ms <= 0) throw left.error();
    for (const row of await cellsOf(db, query.team, first, last)) {
      cells.push({ day: row.day, team: row.team, project: row.project, model: row.model, requests: toNumber(row.requests), totalTokens: toNumber(row.tokens), costNanos: toNumber(row.cost) });
    }
  }
  return cells;
}

/** Requests in `[since, until)`, with those answered 429 and those answered 5xx. */
export async function selectRecentOutcomes(db: Kysely<Database>, query: RecentOutcomesQuery): Promise<RecentOutcomes> {
  const row = await db
    .selectFrom('ledger')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('requests'),
      eb.fn.sum<number | string>(sql`case when ${sql.ref('status')} = 429 then 1 else 0 end`).as('rejected'),
      eb.fn.sum<number | string>(sql`case when ${sql.ref('status')} >= 500 then 1 else 0 end`).as('failed'),
    ])
    .where('at', '>=', query.since)
    .where('at', '<', query.until)
    .$if(query.team !== undefined, (q) => q.where('team', '=', query.team!))
    .executeTakeFirstOrThrow();
  return { requests: toNumber(row.requests), rejected429: toNumber(row.rejected), upstreamErrors: toNumber(row.failed) };
}
