import { randomUUID } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, usageFrom, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { chatBody } from '../../helpers/gateway-traffic.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startGatewayProcess, writeTempConfig, type GatewayProcess } from '../../helpers/process.js';
import { freePort } from '../../helpers/ports.js';
import { eventually } from '../../helpers/wait.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
/** Per million tokens: a prompt token is 50 nano-dollars, a completion token 220. */
const PRICE = { prompt: 0.05, completion: 0.22 };
const admin = { authorization: bearer(KEYS.admin) };

/** What a request sent through a gateway was answered (the client's view). */
interface Sent {
  readonly requestId: string;
  readonly status: number;
}

/**
 * SPEC 14: two instances writing one ledger in PostgreSQL, one of them stopped with SIGTERM
 * under load. What /admin/usage reports equals what the upstream reported, to the token and the
 * cent; every answered request is one row, none twice.
 */
describe('the usage ledger reconciles with the upstream across two instances', () => {
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: GatewayProcess;
  let bUrl = '';
  const sent: Sent[] = [];

  const pricing = { prices: { currency: 'USD', models: { [QWEN]: PRICE } } };

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    a = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url }, metering: pricing }));
    const port = await freePort();
    bUrl = `http://127.0.0.1:${port}`;
    const yaml = `server: { host: 127.0.0.1, shutdownGraceMs: 5000 }
upstreams: { service: { url: "${service.url}" }, inference: { url: "${inference.url}" } }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)}, admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} } }
metering: ${JSON.stringify(pricing)}
database: { url: "${database.url}" }
logging: { level: warn }
`;
    b = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port) });
    await b.waitFor('tollgate listening');
  });
  afterAll(async () => {
    b.kill('SIGKILL');
    await a.close();
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  /**
   * Sends a chat through `url`, recording the request id the client got and its status (undefined: the connection failed).
   * `stream` as chatBody's: `without-usage` is a stream the gateway forces usage into, `with-usage` one that asked for it.
   */
  async function chat(url: string, options: { stream?: 'with-usage' | 'without-usage'; usage?: string; mode?: string; body?: string } = {}): Promise<void> {
    const requestId = randomUUID();
    const headers: Record<string, string> = { authorization: bearer(KEYS.teamA), 'x-request-id': requestId, 'content-type': 'application/json', 'openai-project': 'team-a/recon' };
    if (options.usage) headers['x-fixture-usage'] = options.usage;
    if (options.mode) headers['x-fixture-mode'] = options.mode;
    const body = options.body ?? chatBody(QWEN, options.stream);
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body }).catch(() => undefined);
    if (!res) return;
    await res.text().catch(() => undefined);
    sent.push({ requestId, status: res.status });
  }

  /** What the upstream reported for the chats it answered: the ledger must hold exactly this. */
  function reported(): { prompt: number; completion: number; costNanos: number } {
    let prompt = 0;
    let completion = 0;
    for (const req of service.requests) {
      if (req.url !== '/v1/chat/completions' || req.headers['x-fixture-mode'] !== undefined) continue;
      const usage = usageFrom(req);
      prompt += usage.prompt_tokens;
      completion += usage.completion_tokens;
    }
    return { prompt, completion, costNanos: prompt * 50 + completion * 220 };
  }

  it('records every answered request once and sums exactly what the upstream reported, through a SIGTERM under load', async () => {
    for (const url of [a.url, bUrl]) {
      await chat(url, { usage: '100,20' });
      await chat(url, { stream: 'with-usage', usage: '50,5' });
      await chat(url, { stream: 'without-usage', usage: '7,3' });
      await chat(url, { body: '{"messages":[]}' });
      await chat(url, { mode: 'error-500' });
    }
    // Load on B, and SIGTERM while it is under way (a quarter of its 200 requests answered): in-flight requests finish, rows are flushed.
    const underWay = sent.length + 50;
    const load = Promise.all(Array.from({ length: 8 }, async (_, worker) => {
      for (let i = 0; i < 25; i++) await chat(bUrl, { stream: i % 2 === 0 ? 'without-usage' : undefined, usage: `${worker + 1},${i + 1}` });
    }));
    await eventually(async () => sent.length >= underWay, 30_000);
    b.kill('SIGTERM');
    await load;
    expect(await b.exited()).toBe(0);
    await a.gateway.settled();

    const rows: Array<Record<string, unknown>> = [];
    for (let after: string | undefined; ; ) {
      const page = await request(a.url)
        .get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&project=recon&limit=37${after ? `&after=${encodeURIComponent(after)}` : ''}`)
        .set(admin);
      expect(page.status).toBe(200);
      rows.push(...(page.body.data as Array<Record<string, unknown>>));
      if (!page.body.has_more) break;
      after = page.body.last_id as string;
    }
    const ids = rows.map((row) => row.request_id as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(sent.map((s) => s.requestId).sort());
    expect(rows.filter((row) => row.status === 422 || row.status === 500).every((row) => row.total_tokens === 0 && row.cost === 0)).toBe(true);

    const expected = reported();
    const totals = await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&team=team-a&project=recon&groupBy=model`).set(admin);
    expect(totals.body).toEqual({
      object: 'list',
      currency: 'USD',
      data: [
        {
          team: 'team-a',
          project: 'recon',
          model: QWEN,
          requests: sent.length - 2,
          prompt_tokens: expected.prompt,
          completion_tokens: expected.completion,
          total_tokens: expected.prompt + expected.completion,
          cost: expected.costNanos / 1e9,
        },
        // The two 422s: a body without a model is recorded as a request of model "unknown", at no cost.
        { team: 'team-a', project: 'recon', model: 'unknown', requests: 2, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 },
      ],
    });
    console.log(
      `reconciliation: ${sent.length} requests (${sent.filter((s) => s.status === 200).length} answered 200), upstream reported ${expected.prompt}+${expected.completion} tokens and ${expected.costNanos / 1e9} USD; the ledger holds the same`,
    );
  }, 60_000);

  it('answers the same rows as CSV (format=csv or Accept: text/csv), parsed by a real CSV parser', async () => {
    const json = await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&groupBy=day`).set(admin);
    for (const csv of [
      await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&groupBy=day&format=csv`).set(admin),
      await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&groupBy=day`).set(admin).set('accept', 'text/csv'),
    ]) {
      expect(csv.status).toBe(200);
      expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
      const records = parseCsv(csv.text, { columns: true }) as Array<Record<string, string>>;
      expect(Object.keys(records[0]!)).toEqual(['team', 'project', 'day', 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost']);
      expect(
        records.map((r) => ({ ...r, requests: Number(r.requests), prompt_tokens: Number(r.prompt_tokens), completion_tokens: Number(r.completion_tokens), total_tokens: Number(r.total_tokens), cost: Number(r.cost) })),
      ).toEqual(json.body.data);
      // Cost in plain decimals, never in exponent form.
      expect(csv.text).not.toMatch(/\de-\d/);
    }
  });

  it('pages rows as NDJSON with Accept: application/x-ndjson, the paging state in headers', async () => {
    const first = await request(a.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&limit=5`).set(admin).set('accept', 'application/x-ndjson');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const lines = first.text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(5);
    expect(Object.keys(lines[0]!)).toEqual([
      'id', 'request_id', 'at', 'team', 'project', 'key', 'route', 'method', 'status', 'model',
      'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost', 'estimated', 'request_bytes', 'duration_ms', 'trace_id',
      'requested_model', 'fallback_from',
    ]);
    expect(first.headers['x-has-more']).toBe('true');
    const json = await request(a.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&limit=5`).set(admin);
    expect(json.body.data).toEqual(lines);
    expect(first.headers['x-last-id']).toBe(json.body.last_id);
  });

  it('answers 400 invalid_query for a cursor it never handed out', async () => {
    const res = await request(a.url).get(`/admin/usage/requests?from=${utcDay()}&to=${utcDay()}&after=garbage`).set(admin);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_query', param: 'after' });
  });

  it('groups by month and by route', async () => {
    const month = await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&team=team-a&project=recon&groupBy=month`).set(admin);
    expect(month.body.data.map((row: { month: string }) => row.month)).toEqual([utcDay().slice(0, 7)]);
    const route = await request(a.url).get(`/admin/usage?from=${utcDay()}&to=${utcDay()}&team=team-a&project=recon&groupBy=route`).set(admin);
    expect(route.body.data.map((row: { route: string }) => row.route)).toEqual(['POST /v1/chat/completions']);
  });
});
