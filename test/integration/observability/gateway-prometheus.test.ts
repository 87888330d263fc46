import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../../src/proxy/index.js';
import { startStack } from '../../helpers/gateway.js';
import { chatBody, chatRequest, TrafficLedger, type ChatSpec, type TrafficRequest } from '../../helpers/gateway-traffic.js';
import { freePort } from '../../helpers/ports.js';
import { digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import {
  runPromtool,
  ALERTS_PATH,
  extractAlertExpressions,
  extractDashboardQueries,
  extractDashboardVariables,
  startPrometheus,
  type TestPrometheus,
} from '../../helpers/prometheus.js';
import { queryVector, waitForMoreScrapes, withoutThresholds } from '../../helpers/prometheus-results.js';
import { eventually } from '../../helpers/wait.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

// End to end: the real gateway in front of the fixture upstreams, scraped by a real Prometheus
// (Debian `prometheus`). Every dashboard query and alert expression must run on what it scraped,
// and the counters must add up to exactly the traffic that was sent.

const CHAT = '/v1/chat/completions';
const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';
const chat = (spec: ChatSpec): TrafficRequest => chatRequest(CHAT, spec);
/** rpm 1: its second request in a minute is a 429 with scope key. */
const TIGHT_KEY = 'tg-test-team-b-tight-00112233445566';
/** Has a limit, so its requests ask Redis: while Redis is down each one is a store error. */
const METERED_KEY = 'tg-test-team-a-metered-998877665544';
/** May use Qwen only (SPEC 21): a chat naming Llama is a model denial with scope key. */
const NARROW_KEY = 'tg-test-team-b-narrow-55443322110099';
const SERVICE_TIMEOUT_MS = 1000;

/** Routed to an upstream nothing listens on (SPEC 22): served by its fallback, Qwen, and counted as a fallback. */
const DOWN_MODEL = 'acme/down';

const OVERRIDES = (redisUrl: string, closedPort: number): Record<string, unknown> => ({
  upstreams: { service: { timeoutMs: SERVICE_TIMEOUT_MS }, down: { url: `http://127.0.0.1:${closedPort}`, retries: 0 } },
  models: { routes: [{ match: DOWN_MODEL, upstream: 'down' }], fallbacks: { [DOWN_MODEL]: [QWEN] } },
  auth: {
    keys: [
      ...KEY_ENTRIES,
      { id: 'team-b-tight', sha256: digest(TIGHT_KEY), team: 'team-b', projects: ['*'], limits: { rpm: 1 } },
      { id: 'team-a-metered', sha256: digest(METERED_KEY), team: 'team-a', projects: ['*'], limits: { tpm: 1_000_000 } },
      { id: 'team-b-narrow', sha256: digest(NARROW_KEY), team: 'team-b', projects: ['*'], models: [QWEN] },
    ],
  },
  // team-b/batch: the third request in a minute is a 429 with scope project.
  rateLimits: { onStoreError: 'open', projects: { 'team-b/batch': { rpm: 2 } } },
  redis: { url: redisUrl },
  // Priced: the cost panels have data.
  metering: { prices: { models: { [QWEN]: { prompt: 0.05, completion: 0.22 } } } },
});

const teamA = { key: KEYS.teamA, team: 'team-a', project: 'default', model: QWEN };
const teamAProd = { key: KEYS.teamAProdOnly, team: 'team-a', project: 'prod', model: LLAMA };
const teamB = { key: KEYS.teamB, team: 'team-b', project: 'default', model: QWEN };
const teamBBatch = { ...teamB, project: 'batch', headers: { 'openai-project': 'team-b/batch' } };

/** Ids sent in paths: none may show up in a label value. */
const RAW_IDS = { model: `model-${randomUUID()}`, job: `job-${randomUUID()}` };

const INVALID_BODIES = [
  '{"messages":[{"role":"user","content":"hi"}]}',
  '{"model":"m","messages":"hi"}',
  '[{"model":"m"}]',
  '{"model": ',
  'null',
];

async function sendAnsweredTraffic(ledger: TrafficLedger): Promise<void> {
  for (let i = 0; i < 3; i++) await ledger.send(chat({ what: `json chat team-a ${i}`, ...teamA, usage: [10, 4] }));
  for (let i = 0; i < 2; i++) await ledger.send(chat({ what: `json chat team-a/prod ${i}`, ...teamAProd, usage: [7, 3] }));
  await ledger.send(chat({ what: 'json chat team-b', ...teamB, usage: [20, 8] }));
  await ledger.send(chat({ what: 'json chat team-b, trailing slash', ...teamB, usage: [20, 8], path: `${CHAT}/` }));
  await ledger.send(chat({ what: 'stream with include_usage', ...teamA, usage: [5, 2], stream: 'with-usage' }));
  await ledger.send(chat({ what: 'stream without include_usage', ...teamB, usage: [6, 1], stream: 'without-usage' }));
  // Asked for DOWN_MODEL, served (and metered) as Qwen.
  await ledger.send({ ...chat({ what: 'a fallback from an unreachable upstream', ...teamA, usage: [3, 1] }), body: chatBody(DOWN_MODEL) });
  for (let i = 0; i < 2; i++) await ledger.send({ what: `models ${i}`, method: 'GET', path: '/v1/models', route: '/v1/models', expect: 200, key: KEYS.teamA });
  const job = JSON.stringify({ model_id: RAW_IDS.model, config: { learning_rate: 1e-5 } });
  for (let i = 0; i < 2; i++) {
    await ledger.send({ what: `rl job ${i}`, method: 'POST', path: '/v1/preview/training-jobs', route: '/v1/preview/training-jobs', expect: 200, key: KEYS.teamA, body: job });
  }
  await ledger.send({ what: 'sft job', method: 'POST', path: '/v1/preview/sft-training-jobs', route: '/v1/preview/sft-training-jobs', expect: 200, key: KEYS.teamB, body: job });
  const withIds: Array<[TrafficRequest['method'], string, string]> = [
    ['DELETE', `/v1/preview/models/${RAW_IDS.model}`, '/v1/preview/models/{model_id}'],
    ['GET', `/v1/preview/models/${RAW_IDS.model}/checkpoints`, '/v1/preview/models/{model_id}/checkpoints'],
    ['POST', `/v1/preview/models/${RAW_IDS.model}/log`, '/v1/preview/models/{model_id}/log'],
    ['GET', `/v1/preview/training-jobs/${RAW_IDS.job}`, '/v1/preview/training-jobs/{training_job_id}'],
    ['GET', `/v1/preview/training-jobs/${RAW_IDS.job}/events`, '/v1/preview/training-jobs/{training_job_id}/events'],
  ];
  for (const [method, path, route] of withIds) {
    await ledger.send({ what: `${method} ${route}`, method, path, route, expect: 200, key: KEYS.teamA, ...(method === 'POST' ? { body: '{}' } : {}) });
  }
  await ledger.send({ what: 'health', method: 'GET', path: '/v1/health', route: '/v1/health', expect: 200, key: KEYS.teamA });
}

async function sendRejectedTraffic(ledger: TrafficLedger): Promise<void> {
  const rejected = { team: 'team-a', project: 'default', model: QWEN, usage: [1, 1] as [number, number] };
  for (let i = 0; i < 2; i++) await ledger.send(chat({ what: `no key ${i}`, ...rejected, expect: 401 }));
  await ledger.send(chat({ what: 'basic auth', ...rejected, expect: 401, headers: { authorization: 'Basic dXNlcjpwYXNz' } }));
  await ledger.send(chat({ what: 'unknown key', ...rejected, key: 'tg-not-a-configured-key-000000000', expect: 401 }));
  await ledger.send(chat({ what: 'forbidden project', ...teamAProd, usage: [1, 1], expect: 403, headers: { 'openai-project': 'team-a/research' } }));
  await ledger.send(chat({ what: 'model the key may not use', ...teamB, key: NARROW_KEY, model: LLAMA, usage: [1, 1], expect: 404 }));
  for (const [i, body] of INVALID_BODIES.entries()) {
    await ledger.send({ what: `invalid body ${i}`, method: 'POST', path: CHAT, route: CHAT, expect: 422, key: KEYS.teamA, body });
  }
  for (const expect of [200, 429, 429]) {
    await ledger.send(chat({ what: `tight key, expecting ${expect}`, ...teamB, key: TIGHT_KEY, usage: [1, 1], expect }));
  }
  for (const expect of [200, 200, 429, 429]) {
    await ledger.send(chat({ what: `team-b/batch, expecting ${expect}`, ...teamBBatch, usage: [2, 2], expect }));
  }
}

async function sendUpstreamFailures(ledger: TrafficLedger): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await ledger.send(chat({ what: `upstream reset ${i}`, ...teamA, usage: [1, 1], expect: 502, headers: { 'x-fixture-mode': 'reset' } }));
  }
  await ledger.send(chat({ what: 'upstream hangs', ...teamA, usage: [1, 1], expect: 504, headers: { 'x-fixture-mode': 'hang' } }));
}

/**
 * Kills Redis and sends a chat whose key has a limit: the limiter's admission fails (a store
 * error; `open` serves it from memory). Then restarts Redis (empty) and waits until the gateway
 * says its store is connected again, so no store error can happen once Prometheus scrapes.
 */
async function sendDuringRedisOutage(ledger: TrafficLedger, redis: TestRedis, gatewayUrl: string): Promise<void> {
  await redis.kill();
  await ledger.send(chat({ what: 'chat while Redis is down', ...teamA, key: METERED_KEY, usage: [9, 9] }));
  await redis.restart();
  // Polls an external recovery (ioredis reconnecting by its own timers): no event to await.
  await eventually(async () => ((await (await fetch(`${gatewayUrl}/readyz`)).json()) as { store: string }).store === 'connected', 15_000);
}

describe('the gateway scraped by a real Prometheus', () => {
  let redis: TestRedis;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let prometheus: TestPrometheus;
  let ledger: TrafficLedger;
  let target: string;

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack(OVERRIDES(redis.url, await freePort()));
    target = `127.0.0.1:${stack.gw.port}`;
    ledger = new TrafficLedger(stack.gw.url);
    await sendAnsweredTraffic(ledger);
    await sendRejectedTraffic(ledger);
    await sendUpstreamFailures(ledger);
    await sendDuringRedisOutage(ledger, redis, stack.gw.url);
    // One stream stays open through the first scrape, so the in-flight gauge has something to show.
    const heldStream = ledger.send(chat({ what: 'stream held open', ...teamAProd, usage: [3, 1], stream: 'with-usage', headers: { 'x-fixture-mode': 'stream-hold' } }));
    const held = await stack.service.nextHeld();
    prometheus = await startPrometheus({ targets: [target], scrapeIntervalSeconds: 1, ruleFiles: [ALERTS_PATH] });
    await prometheus.waitForScrape({ metric: 'tollgate_inflight_requests', scrapes: 1 });
    for (const event of held.rest) held.res.write(event);
    held.res.end();
    await heldStream;
    // Two more scrapes: the last one has the final counters, and rate() has two samples.
    await waitForMoreScrapes(prometheus, 2);
  });

  afterAll(async () => {
    await prometheus?.stop();
    await stack?.close();
    await redis?.stop();
  });

  it('sent exactly the traffic it meant to (each request got its intended status)', () => {
    expect(ledger.surprises()).toEqual([]);
  });

  it("passes promtool check metrics on the gateway's own exposition after the traffic", async () => {
    const body = await (await fetch(`${stack.gw.url}/metrics`)).text();
    expect(body).toContain('tollgate_tokens_total{team="team-a"');
    const result = await runPromtool(['check', 'metrics'], body);
    expect({ code: result.code, output: result.stdout + result.stderr }).toEqual({ code: 0, output: '' });
  });

  it('scrapes the gateway with up == 1', async () => {
    expect(await queryVector(prometheus, 'up', ['job', 'instance'])).toEqual({ [`tollgate ${target}`]: 1 });
  });

  it('records exactly N validation failures for N invalid chat bodies', async () => {
    expect(ledger.count(422)).toBe(INVALID_BODIES.length);
    expect(await queryVector(prometheus, 'sum by (route) (tollgate_validation_failures_total)', ['route'])).toEqual({ [CHAT]: 5 });
  });

  it('counts every request by route template, method and status', async () => {
    const recorded = await queryVector(prometheus, 'sum by (route, method, status) (tollgate_requests_total)', ['route', 'method', 'status']);
    expect(recorded).toEqual(ledger.requestsByRoute());
    expect(recorded[`${CHAT} POST 200`]).toBe(15);
  });

  it('observes one duration per request, overhead per forwarded request and TTFB per upstream answer', async () => {
    // With model routes configured the gateway answers /v1/models itself (SPEC 22): nothing is forwarded for it.
    const perRoute = (statuses: number[], forwardedOnly = false): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const { request } of ledger.sent) {
        if (forwardedOnly && request.route === '/v1/models') continue;
        if (statuses.includes(request.expect)) out[request.route] = (out[request.route] ?? 0) + 1;
      }
      return out;
    };
    const count = (metric: string): Promise<Record<string, number>> => queryVector(prometheus, `sum by (route) (${metric}_count)`, ['route']);
    expect(await count('tollgate_request_duration_seconds')).toEqual(perRoute([200, 401, 403, 404, 422, 429, 502, 504]));
    expect(await count('tollgate_overhead_seconds')).toEqual(perRoute([200, 502, 504], true));
    expect(await count('tollgate_upstream_ttfb_seconds')).toEqual(perRoute([200], true));
  });

  it('meters tokens per team, project, model and type from the upstream usage', async () => {
    const recorded = await queryVector(prometheus, 'sum by (team, project, model, type) (tollgate_tokens_total)', ['team', 'project', 'model', 'type']);
    expect(recorded).toEqual(ledger.tokensByTeamProjectModelType());
    expect(await queryVector(prometheus, 'sum by (team) (tollgate_tokens_total)', ['team'])).toEqual({ 'team-a': 30 + 12 + 14 + 6 + 5 + 2 + 9 + 9 + 3 + 1 + 3 + 1, 'team-b': 40 + 16 + 6 + 1 + 1 + 1 + 4 + 4 });
  });

  it('counts 429s by scope and limit, auth failures by reason and upstream errors by kind', async () => {
    // Every known series exists from start-up at 0 (so a first error is an increase); the non-zero ones are what the traffic caused.
    // 3 scopes (key, project, team: SPEC 16) × the 6 kinds of the limits table (rpm, tpm, tokensPerDay, costPerDay, costPerMonth, concurrency).
    expect(Object.keys(await queryVector(prometheus, 'tollgate_ratelimit_rejections_total', ['scope', 'limit']))).toHaveLength(18);
    expect(await queryVector(prometheus, 'sum by (scope, limit) (tollgate_ratelimit_rejections_total) > 0', ['scope', 'limit'])).toEqual({ 'key rpm': 2, 'project rpm': 2 });
    expect(await queryVector(prometheus, 'sum by (reason) (tollgate_auth_failures_total) > 0', ['reason'])).toEqual({ missing: 2, malformed: 1, unknown_key: 1, project_forbidden: 1 });
    expect(await queryVector(prometheus, 'sum by (upstream, kind) (tollgate_upstream_errors_total) > 0', ['upstream', 'kind'])).toEqual({ 'service reset': 2, 'service timeout': 1, 'down connect': 1 });
    expect(await queryVector(prometheus, 'sum by (from, to, reason) (tollgate_model_fallbacks_total)', ['from', 'to', 'reason'])).toEqual({ [`${DOWN_MODEL} ${QWEN} connect`]: 1 });
  });

  it('counts training jobs created by team, project and kind', async () => {
    expect(await queryVector(prometheus, 'sum by (team, project, kind) (tollgate_training_jobs_created_total)', ['team', 'project', 'kind'])).toEqual({ 'team-a default rl': 2, 'team-b default sft': 1 });
  });

  it('counts store errors while Redis is down', async () => {
    // At least the limiter's failed admission; usage writes retried during the outage add more.
    const errors = await queryVector(prometheus, 'sum by (store) (tollgate_store_errors_total)', ['store']);
    expect(Object.keys(errors)).toEqual(['redis']);
    expect(errors.redis).toBeGreaterThanOrEqual(1);
  });

  it('shows the held stream in flight during the first scrape and nothing in flight afterwards', async () => {
    const routes = [...new Set(ledger.sent.map((s) => s.request.route))];
    const peak = await queryVector(prometheus, 'max by (route) (max_over_time(tollgate_inflight_requests[1h]))', ['route']);
    expect(peak).toEqual(Object.fromEntries(routes.map((route) => [route, route === CHAT ? 1 : 0])));
    expect(await queryVector(prometheus, 'sum(tollgate_inflight_requests)', [])).toEqual({ '': 0 });
  });

  it('labels routes with their templates only, never a raw path with ids', async () => {
    const values = Object.keys(await queryVector(prometheus, 'count by (route) ({__name__=~"tollgate_.+", route!=""})', ['route'])).sort();
    expect(values).toEqual([...new Set(ledger.sent.map((s) => s.request.route))].sort());
    const templates = new Set(ROUTES.map((r) => r.template));
    expect(values.filter((v) => !templates.has(v) || v.includes(RAW_IDS.model) || v.includes(RAW_IDS.job))).toEqual([]);
    const upstreams = await queryVector(prometheus, 'count by (route, upstream) (tollgate_requests_total)', ['route', 'upstream']);
    expect(Object.keys(upstreams).sort()).toEqual(values.map((v) => `${v} ${ROUTES.find((r) => r.template === v)?.upstream ?? '?'}`));
  });

  it.each(extractDashboardQueries().map((q) => [`${q.panel} ${q.refId}`, q.promql] as const))('dashboard query "%s" runs and returns series', async (_panel, promql) => {
    const answer = await prometheus.query(promql);
    expect({ status: answer.status, error: answer.error }).toEqual({ status: 'success', error: undefined });
    expect(answer.data?.result.length ?? 0).toBeGreaterThan(0);
  });

  const expectedVariableValues: Record<string, () => string[]> = {
    instance: () => [target],
    team: () => ['team-a', 'team-b'],
    project: () => ['batch', 'default', 'prod'],
    model: () => [QWEN, LLAMA],
  };
  it.each(extractDashboardVariables().map((v) => [v.name, v] as const))('dashboard variable %s lists the values the traffic produced', async (name, variable) => {
    const answer = await prometheus.query(variable.promql);
    expect(answer.status).toBe('success');
    expect(answer.data?.result.map((r) => r.metric[variable.label]).sort()).toEqual(expectedVariableValues[name]?.().sort());
  });

  // A threshold comparison is (rightly) empty on this healthy traffic: the counters stopped
  // moving before Prometheus came up, so no rate, increase or quantile crosses a threshold,
  // and the instance is up. What the alert compares (withoutThresholds: every comparison with a
  // number literal removed) must have data, or the alert could never fire.
  it.each(extractAlertExpressions().map((r) => [r.alert, r.expr] as const))('alert %s runs, does not fire, and its compared value has data', async (_alert, expr) => {
    const answer = await prometheus.query(expr);
    expect({ status: answer.status, error: answer.error, result: answer.data?.result }).toEqual({ status: 'success', error: undefined, result: [] });
    const inner = withoutThresholds(expr);
    expect(inner).not.toBe(expr.trim());
    const compared = await prometheus.query(inner);
    expect({ status: compared.status, error: compared.error }).toEqual({ status: 'success', error: undefined });
    expect(compared.data?.result.length ?? 0).toBeGreaterThan(0);
  });

  it('evaluates every alert rule of alerts.yml without error', async () => {
    const rules = await prometheus.evaluatedRules();
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(extractAlertExpressions().map((r) => [r.alert, 'ok', '']));
  });
});
