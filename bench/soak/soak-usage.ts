import { utcDay } from '../../src/calendar.js';
import { ADMIN_KEY, METRICS_TOKEN } from './soak-gateway.js';
import type { ExpectedRow } from './soak-traffic.js';
import type { UpstreamTally } from './soak-upstream.js';

/**
 * Does usage reconcile after the soak? Three accounts of the same requests are compared:
 *   - the clients' (every request id, the status it got, whether it left a stream mid-way),
 *   - the upstream's (the usage it reported in every reply it sent in full),
 *   - the gateway's ledger, read back through GET /admin/usage/requests, and its aggregates
 *     (GET /admin/usage) and Prometheus counters (tollgate_tokens_total).
 * Each expected request has exactly one row with its status; a row's tokens are the upstream's
 * usage to the token, or — for exactly the streams a client left — a non-zero estimate.
 */

interface LedgerRowJson {
  readonly request_id: string;
  readonly status: number;
  readonly total_tokens: number;
  readonly estimated: boolean;
}

export interface UsageReconciliation {
  readonly expectedRows: number;
  readonly rows: number;
  readonly missing: number;
  readonly unexpected: number;
  readonly duplicates: number;
  readonly statusMismatches: number;
  readonly estimatedMismatches: number;
  readonly tokenMismatches: number;
  /** Non-estimated tokens in the ledger, and what the upstream reported. */
  readonly ledgerTokens: number;
  readonly upstreamTokens: number;
  readonly upstreamReplies: number;
  readonly estimatedRows: number;
  readonly estimatedTokens: number;
  /** Sums of GET /admin/usage over the soak's days. */
  readonly aggregateRequests: number;
  readonly aggregateTokens: number;
  /** Sum of tollgate_tokens_total (prompt + completion) on /metrics. */
  readonly metricsTokens: number;
  readonly rowsDropped: number;
  readonly databaseErrors: number;
  readonly storeErrors: number;
  readonly examples: readonly string[];
}

const KEPT_EXAMPLES = 10;

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_KEY.secret}` } });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function readLedger(baseUrl: string, days: string): Promise<LedgerRowJson[]> {
  const rows: LedgerRowJson[] = [];
  let after: string | null = null;
  for (;;) {
    const cursor: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const page = await getJson<{ data: LedgerRowJson[]; has_more: boolean; last_id: string | null }>(`${baseUrl}/admin/usage/requests?${days}&limit=1000${cursor}`);
    rows.push(...page.data);
    if (!page.has_more || page.last_id === null) return rows;
    after = page.last_id;
  }
}

/** Sum of every sample of `name` in a Prometheus exposition. */
function metricSum(exposition: string, name: string): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export async function reconcileUsage(baseUrl: string, since: Date, expected: ReadonlyMap<string, ExpectedRow>, upstream: UpstreamTally): Promise<UsageReconciliation> {
  const days = `from=${utcDay(since.getTime())}&to=${utcDay()}`;
  const rows = await readLedger(baseUrl, days);
  const upstreamUsage = new Map(upstream.usage);
  const examples: string[] = [];
  const note = (line: string): void => void (examples.length < KEPT_EXAMPLES && examples.push(line));
  const seen = new Set<string>();
  let duplicates = 0;
  let unexpected = 0;
  let statusMismatches = 0;
  let estimatedMismatches = 0;
  let tokenMismatches = 0;
  let ledgerTokens = 0;
  let estimatedRows = 0;
  let estimatedTokens = 0;
  for (const row of rows) {
    if (seen.has(row.request_id)) {
      duplicates++;
      note(`${row.request_id}: a second row`);
      continue;
    }
    seen.add(row.request_id);
    const wanted = expected.get(row.request_id);
    if (!wanted) {
      unexpected++;
      note(`${row.request_id}: a row for a request no client expects one for (status ${row.status})`);
      continue;
    }
    if (row.status !== wanted.status) {
      statusMismatches++;
      note(`${row.request_id} (${wanted.kind}): row status ${row.status}, the client got ${wanted.status}`);
    }
    if (row.estimated !== wanted.estimated) {
      estimatedMismatches++;
      note(`${row.request_id} (${wanted.kind}): estimated ${String(row.estimated)}, expected ${String(wanted.estimated)}`);
    }
    const reported = upstreamUsage.get(row.request_id);
    if (row.estimated) {
      estimatedRows++;
      estimatedTokens += row.total_tokens;
      if (row.total_tokens <= 0 || reported !== undefined) {
        tokenMismatches++;
        note(`${row.request_id} (${wanted.kind}): estimated ${row.total_tokens} tokens, upstream reported ${String(reported)}`);
      }
    } else {
      ledgerTokens += row.total_tokens;
      if (row.total_tokens !== (reported ?? 0)) {
        tokenMismatches++;
        note(`${row.request_id} (${wanted.kind}): ${row.total_tokens} tokens in the ledger, upstream reported ${String(reported ?? 0)}`);
      }
    }
  }
  let missing = 0;
  for (const [id, wanted] of expected) {
    if (seen.has(id)) continue;
    missing++;
    note(`${id} (${wanted.kind}, status ${wanted.status}): no ledger row`);
  }
  for (const id of upstreamUsage.keys()) {
    if (!seen.has(id)) note(`${id}: the upstream reported usage, the ledger has no row`);
  }
  const aggregate = await getJson<{ data: Array<{ requests: number; total_tokens: number }> }>(`${baseUrl}/admin/usage?${days}`);
  const metrics = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  let upstreamTokens = 0;
  for (const tokens of upstreamUsage.values()) upstreamTokens += tokens;
  return {
    expectedRows: expected.size,
    rows: rows.length,
    missing,
    unexpected,
    duplicates,
    statusMismatches,
    estimatedMismatches,
    tokenMismatches,
    ledgerTokens,
    upstreamTokens,
    upstreamReplies: upstreamUsage.size,
    estimatedRows,
    estimatedTokens,
    aggregateRequests: aggregate.data.reduce((sum, row) => sum + row.requests, 0),
    aggregateTokens: aggregate.data.reduce((sum, row) => sum + row.total_tokens, 0),
    metricsTokens: metricSum(metrics, 'tollgate_tokens_total'),
    rowsDropped: metricSum(metrics, 'tollgate_usage_rows_dropped_total'),
    databaseErrors: metricSum(metrics, 'tollgate_database_errors_total'),
    storeErrors: metricSum(metrics, 'tollgate_store_errors_total'),
    examples,
  };
}

/** Every account agrees: one row per request, the upstream's tokens to the token, aggregates and counters equal. */
export function usageReconciles(u: UsageReconciliation): boolean {
  const allTokens = u.ledgerTokens + u.estimatedTokens;
  return (
    u.rows === u.expectedRows &&
    u.missing + u.unexpected + u.duplicates + u.statusMismatches + u.estimatedMismatches + u.tokenMismatches === 0 &&
    u.ledgerTokens === u.upstreamTokens &&
    u.aggregateRequests === u.rows &&
    u.aggregateTokens === allTokens &&
    u.metricsTokens === allTokens &&
    u.rowsDropped === 0
  );
}
