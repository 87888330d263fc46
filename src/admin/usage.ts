import type { Request, RequestHandler } from 'express';
import { ledgerRowView, type Ledger } from '../metering/index.js';
import { formatNanos, nanosToAmount } from '../money.js';
import { InvalidCursorError, type StoreHandle, type UsageAggregate } from '../store/index.js';
import { storeFailure } from './audit.js';
import { CsvNumber, invalidQuery, narrowedTeam, toCsv } from '../admin-requests/index.js';
import { csvRequested, parseLedgerPageQuery, parseUsageQuery } from './usage-query.js';

/** Where the usage routes read from: the ledger in the durable store, after this instance's buffered rows are written. */
export interface UsageDeps {
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  /** The price currency of the current configuration. */
  readonly currency: () => string;
}

/** How long a read waits for this instance's buffered rows to reach the database (read-your-writes). */
const FLUSH_BEFORE_READ_MS = 1000;

const DIMENSIONS = ['model', 'key', 'day', 'month', 'route'] as const;

/** An aggregate as the API answers it: snake_case counts, cost in currency units. */
function usageRow(aggregate: UsageAggregate): Record<string, string | number> {
  const row: Record<string, string | number> = { team: aggregate.team, project: aggregate.project };
  for (const dimension of DIMENSIONS) {
    const value = aggregate[dimension];
    if (value !== undefined) row[dimension] = value;
  }
  return {
    ...row,
    requests: aggregate.requests,
    prompt_tokens: aggregate.promptTokens,
    completion_tokens: aggregate.completionTokens,
    total_tokens: aggregate.totalTokens,
    cost: nanosToAmount(aggregate.costNanos),
  };
}

const wants = (req: Request, type: string): boolean => (req.headers.accept ?? '').split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === type);

const readError = (err: unknown): unknown => {
  if (err instanceof InvalidCursorError) return invalidQuery('after', 'Query parameter "after" is not a cursor this API handed out (use last_id of the previous page).');
  return storeFailure(err);
};

/** `GET /admin/usage` (SPEC 7, 14.2): sums from the ledger, as JSON or CSV (`format=csv` or `Accept: text/csv`). */
export function usageHandler(deps: UsageDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const query = parseUsageQuery(req.query as Record<string, unknown>);
      const team = narrowedTeam(res, query.team);
      if (team !== undefined) query.team = team;
      const csv = csvRequested(req.query as Record<string, unknown>);
      await deps.ledger.flush(Date.now() + FLUSH_BEFORE_READ_MS);
      const aggregates = await deps.handle.require().aggregateUsage(query);
      const rows = aggregates.map(usageRow);
      if (csv || wants(req, 'text/csv')) {
        const columns = ['team', 'project', ...(query.groupBy ? [query.groupBy] : []), 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'];
        // Cost as a plain decimal (never 6e-7) for spreadsheets.
        const cells = rows.map((row, i) => ({ ...row, cost: new CsvNumber(formatNanos(aggregates[i]!.costNanos)) }));
        res.type('text/csv; charset=utf-8').send(toCsv(columns, cells));
        return;
      }
      res.json({ object: 'list', currency: deps.currency(), data: rows });
    } catch (err) {
      next(readError(err));
    }
  };
}

/** `GET /admin/usage/requests` (SPEC 14.2): ledger rows in time order, paged by cursor; NDJSON with `Accept: application/x-ndjson`. */
export function ledgerRowsHandler(deps: UsageDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const query = parseLedgerPageQuery(req.query as Record<string, unknown>);
      const team = narrowedTeam(res, query.team);
      if (team !== undefined) query.team = team;
      await deps.ledger.flush(Date.now() + FLUSH_BEFORE_READ_MS);
      const page = await deps.handle.require().pageLedger(query);
      const data = page.rows.map(ledgerRowView);
      if (wants(req, 'application/x-ndjson')) {
        // The paging state goes in headers: every line of the body is a row.
        res.setHeader('x-has-more', String(page.hasMore));
        if (page.lastId !== null) res.setHeader('x-last-id', page.lastId);
        res.type('application/x-ndjson').send(data.map((row) => `${JSON.stringify(row)}\n`).join(''));
        return;
      }
      res.json({ object: 'list', data, has_more: page.hasMore, last_id: page.lastId });
    } catch (err) {
      next(readError(err));
    }
  };
}
