import { sql, type Kysely } from 'kysely';
import type { Database } from '../core/schema.js';

/** What a ledger row adds to (or, deleted, takes from) its day's sums. */
export interface DailyPart {
  readonly at: string;
  readonly team: string;
  readonly project: string;
  readonly key_id: string;
  readonly model: string;
  readonly method: string;
  readonly route: string;
  readonly prompt_tokens: number | string;
  readonly completion_tokens: number | string;
  readonly total_tokens: number | string;
  readonly cost_nanos: number | string;
}

interface DailySum {
  day: string;
  team: string;
  project: string;
  key_id: string;
  model: string;
  method: string;
  route: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_nanos: number;
}

/** A row's UTC day from its instant as either driver hands it back (pg: Date; SQLite: ISO text). */
const dayOf = (at: string | Date): string => (at instanceof Date ? at.toISOString() : new Date(at).toISOString()).slice(0, 10);

/**
 * Adds rows to ledger_daily (`sign` 1: inserted; -1: deleted), in the caller's transaction so the
 * sums never disagree with the rows. A day's cell left with no request is deleted.
 */
export async function addToDaily(trx: Kysely<Database>, rows: readonly DailyPart[], sign: 1 | -1): Promise<void> {
  if (rows.length === 0) return;
  const sums = new Map<string, DailySum>();
  for (const row of rows) {
    const day = dayOf(row.at);
    const cell = [day, row.team, row.project, row.key_id, row.model, row.method, row.route].join('\u0000');
    let sum = sums.get(cell);
    if (!sum) {
      sum = { day, team: row.team, project: row.project, key_id: row.key_id, model: row.model, method: row.method, route: row.route, requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 };
      sums.set(cell, sum);
    }
    sum.requests += sign;
    sum.prompt_tokens += sign * Number(row.prompt_tokens);
    sum.completion_tokens += sign * Number(row.completion_tokens);
    sum.total_tokens += sign * Number(row.total_tokens);
    sum.cost_nanos += sign * Number(row.cost_nanos);
  }
  const add = (column: 'requests' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cost_nanos') => sql<number>`${sql.ref(`ledger_daily.${column}`)} + ${sql.ref(`excluded.${column}`)}`;
  const values = [...sums.values()];
  // Bounded statements: SQLite caps bound parameters (12 per cell).
  for (let i = 0; i < values.length; i += 500) {
    await trx
      .insertInto('ledger_daily')
      .values(values.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['day', 'team', 'project', 'key_id', 'model', 'method', 'route']).doUpdateSet({
          requests: add('requests'),
          prompt_tokens: add('prompt_tokens'),
          completion_tokens: add('completion_tokens'),
          total_tokens: add('total_tokens'),
          cost_nanos: add('cost_nanos'),
        }),
      )
      .execute();
  }
  if (sign < 0) {
    const days = [...new Set(values.map((v) => v.day))];
    await trx.deleteFrom('ledger_daily').where('day', 'in', days).where('requests', '<=', 0).execute();
  }
}
