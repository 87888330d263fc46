import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerRowsHandler, usageHandler } from '../../../src/admin/index.js';
import { errors } from '../../../src/errors.js';
import { Ledger } from '../../../src/metering/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { ledgerRow } from '../../integration/store/store-fixtures.js';
import { serveHandlers } from './serve-handlers.js';

/**
 * SPEC 14.2: `/admin/usage` and `/admin/usage/requests` as their handlers answer them over a real
 * SQLite store — the format a client's Accept header picks, read-your-writes of this instance's
 * buffered rows, and the 400 and 503 they answer.
 */

const TODAY = new Date().toISOString().slice(0, 10);
const RANGE = `from=${TODAY}&to=${TODAY}`;

describe('the usage handlers', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(options: { open?: boolean } = {}): Promise<{ url: string; ledger: Ledger }> {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    cleanups.push(() => handle.close());
    if (options.open !== false) expect(await handle.open()).toBe(true);
    const ledger = new Ledger(handle, { enabled: () => true, retentionDays: () => 30, onDropped: () => undefined, onDatabaseError: () => undefined });
    cleanups.push(() => ledger.close(Date.now()));
    const deps = { handle, ledger, currency: () => 'USD' };
    const server = await serveHandlers((app) => {
      app.get('/admin/usage', usageHandler(deps));
      app.get('/admin/usage/requests', ledgerRowsHandler(deps));
    });
    cleanups.push(() => server.close());
    return { url: server.url, ledger };
  }

  /** Two rows of team-a handed to the ledger just now: buffered, not yet written by its own 50 ms timer. */
  function recordTwo(ledger: Ledger): void {
    const now = Date.now();
    for (const [requestId, model, at] of [['r1', 'm-1', now - 1], ['r2', 'm-2', now]] as const) {
      const { id: _id, ...entry } = ledgerRow({ at: new Date(at).toISOString(), requestId, model, promptTokens: 3, completionTokens: 2, totalTokens: 5, costNanos: 1_500_000 });
      ledger.record(entry);
    }
    expect(ledger.pending).toBe(2);
  }

  it('answers CSV, with the groupBy column, for an Accept listing text/csv among others, in any case and with parameters', async () => {
    const { url, ledger } = await start();
    recordTwo(ledger);
    const res = await request(url).get(`/admin/usage?${RANGE}&groupBy=model`).set('accept', 'application/json;q=0.5, Text/CSV ;q=0.9');
    expect([res.status, res.headers['content-type'], res.text]).toEqual([
      200,
      'text/csv; charset=utf-8',
      'team,project,model,requests,prompt_tokens,completion_tokens,total_tokens,cost\r\nteam-a,prod,m-1,1,3,2,5,0.0015\r\nteam-a,prod,m-2,1,3,2,5,0.0015\r\n',
    ]);
  });

  it('answers JSON for an Accept that does not list text/csv', async () => {
    const { url, ledger } = await start();
    recordTwo(ledger);
    const res = await request(url).get(`/admin/usage?${RANGE}`).set('accept', 'text/csvx, application/json');
    expect([res.status, res.body]).toEqual([
      200,
      { object: 'list', currency: 'USD', data: [{ team: 'team-a', project: 'prod', requests: 2, prompt_tokens: 6, completion_tokens: 4, total_tokens: 10, cost: 0.003 }] },
    ]);
  });

  it('pages rows as NDJSON, one row a line, the rows handed to the ledger just before included', async () => {
    const { url, ledger } = await start();
    recordTwo(ledger);
    const res = await request(url).get(`/admin/usage/requests?${RANGE}&limit=5`).set('accept', 'application/x-ndjson');
    expect([res.status, res.headers['content-type'], res.headers['x-has-more']]).toEqual([200, 'application/x-ndjson; charset=utf-8', 'false']);
    const lines = res.text.split('\n');
    expect([lines.length, lines[2]]).toEqual([3, '']);
    expect(lines.slice(0, 2).map((line) => (JSON.parse(line) as { request_id: string }).request_id)).toEqual(['r1', 'r2']);
  });

  it('answers 400 for a cursor it did not hand out, naming the parameter', async () => {
    const { url } = await start();
    const res = await request(url).get(`/admin/usage/requests?${RANGE}&after=not-a-cursor`);
    expect([res.status, res.body]).toEqual([
      400,
      { error: { message: 'Query parameter "after" is not a cursor this API handed out (use last_id of the previous page).', type: 'invalid_request_error', param: 'after', code: 'invalid_query' } },
    ]);
  });

  it('answers 503 database_unavailable on both routes while the database has not been reached', async () => {
    const { url } = await start({ open: false });
    const unavailable = JSON.parse(errors.databaseUnavailable().renderBody()) as unknown;
    for (const path of ['/admin/usage', '/admin/usage/requests']) {
      const res = await request(url).get(`${path}?${RANGE}`);
      expect([path, res.status, res.body]).toEqual([path, 503, unavailable]);
    }
  });
});
