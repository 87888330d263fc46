import { describe, it, expect, beforeAll } from 'vitest';
import { register as globalRegistry } from 'prom-client';
import { createMetrics, type Metrics } from '../../../src/observability/index.js';
import { recordSampleTraffic } from '../../helpers/metrics-target.js';
import { runPromtool } from '../../helpers/prometheus.js';
import { labelSets, parseHelp, parseSamples, parseTypes, type Sample } from './exposition.js';

/** SPEC 8, written out independently of the source: name, type, label names. */
const SPEC_METRICS: [string, 'counter' | 'histogram' | 'gauge', string[]][] = [
  ['tollgate_requests_total', 'counter', ['route', 'method', 'status', 'upstream']],
  ['tollgate_request_duration_seconds', 'histogram', ['route', 'method', 'upstream']],
  ['tollgate_upstream_ttfb_seconds', 'histogram', ['route', 'upstream']],
  ['tollgate_overhead_seconds', 'histogram', ['route']],
  ['tollgate_tokens_total', 'counter', ['team', 'project', 'model', 'type']],
  ['tollgate_ratelimit_rejections_total', 'counter', ['scope', 'limit']],
  ['tollgate_auth_failures_total', 'counter', ['reason']],
  ['tollgate_validation_failures_total', 'counter', ['route']],
  ['tollgate_inflight_requests', 'gauge', ['route']],
  ['tollgate_upstream_errors_total', 'counter', ['upstream', 'kind']],
  ['tollgate_store_errors_total', 'counter', ['store']],
  ['tollgate_training_jobs_created_total', 'counter', ['team', 'project', 'kind']],
  ['tollgate_cost_total', 'counter', ['team', 'project', 'model']],
  ['tollgate_config_reloads_total', 'counter', ['result']],
  ['tollgate_ownership_denials_total', 'counter', ['kind']],
  ['tollgate_model_denials_total', 'counter', ['scope']],
  ['tollgate_model_fallbacks_total', 'counter', ['from', 'to', 'reason']],
  ['tollgate_ownership_unrecorded_total', 'counter', ['kind']],
  ['tollgate_database_errors_total', 'counter', []],
  ['tollgate_usage_rows_dropped_total', 'counter', []],
  // SPEC 18 (tracing):
  ['tollgate_trace_spans_dropped_total', 'counter', []],
  // SPEC 19 (upstream pools):
  ['tollgate_upstream_target_up', 'gauge', ['upstream', 'target']],
  ['tollgate_upstream_retries_total', 'counter', ['upstream', 'reason']],
  ['tollgate_upstream_ejections_total', 'counter', ['upstream', 'target']],
  // Beyond SPEC 8 (documented in docs/metrics.md):
  ['tollgate_buffered_body_bytes', 'gauge', []],
  ['tollgate_client_connections', 'gauge', []],
  ['tollgate_client_connections_max', 'gauge', []],
  ['tollgate_connections_evicted_total', 'counter', ['reason']],
  ['tollgate_connections_refused_total', 'counter', []],
];

const sorted = (names: string[]): string => [...names].sort().join(',');

function bucketBounds(samples: Sample[], name: string): string[] {
  return samples.filter((s) => s.name === `${name}_bucket`).map((s) => s.labels.le ?? '');
}

describe('createMetrics exposition after one observation of every metric', () => {
  let body = '';
  let samples: Sample[] = [];
  let metrics: Metrics;

  beforeAll(async () => {
    metrics = createMetrics();
    recordSampleTraffic(metrics);
    body = (await metrics.render()).body;
    samples = parseSamples(body);
  });

  it.each(SPEC_METRICS)('exposes %s as a %s with labels %j', (name, type, labels) => {
    expect(parseTypes(body).get(name)).toBe(type);
    if (type === 'histogram') {
      expect(labelSets(samples, `${name}_bucket`)).toEqual([sorted([...labels, 'le'])]);
      expect(labelSets(samples, `${name}_sum`)).toEqual([sorted(labels)]);
      expect(labelSets(samples, `${name}_count`)).toEqual([sorted(labels)]);
    } else {
      expect(labelSets(samples, name)).toEqual([sorted(labels)]);
    }
  });

  it.each(SPEC_METRICS)('gives %s a HELP text that says what it measures', (name) => {
    expect(parseHelp(body).get(name)?.length ?? 0).toBeGreaterThan(30);
  });

  it('registers exactly the SPEC 8 tollgate_ metrics and the documented additions', () => {
    const names = metrics.registry.getMetricsAsArray().map((m) => m.name).filter((n) => n.startsWith('tollgate_'));
    expect(names.sort()).toEqual(SPEC_METRICS.map(([name]) => name).sort());
  });

  it('includes the prom-client default process metrics', () => {
    const types = parseTypes(body);
    expect(types.get('process_cpu_seconds_total')).toBe('counter');
    expect(types.get('process_resident_memory_bytes')).toBe('gauge');
    expect(types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(types.get('nodejs_gc_duration_seconds')).toBe('histogram');
  });

  it('passes promtool check metrics', async () => {
    expect(body.split('\n').length).toBeGreaterThan(150);
    const result = await runPromtool(['check', 'metrics'], body);
    expect({ code: result.code, output: result.stdout + result.stderr }).toEqual({ code: 0, output: '' });
  });

  it('buckets request duration and upstream TTFB from 5 ms to 300 s', () => {
    const expected = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '20', '30', '60', '120', '300', '+Inf'];
    expect(bucketBounds(samples, 'tollgate_request_duration_seconds')).toEqual(expected);
    expect(bucketBounds(samples, 'tollgate_upstream_ttfb_seconds')).toEqual(expected);
  });

  it('buckets gateway overhead from 10 µs to 100 ms', () => {
    expect(bucketBounds(samples, 'tollgate_overhead_seconds')).toEqual([
      '0.00001', '0.000025', '0.00005', '0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '+Inf',
    ]);
  });

  it('counts the recorded values exactly', () => {
    const tokens = samples.filter((s) => s.name === 'tollgate_tokens_total').map((s) => [s.labels.type, s.value]);
    expect(tokens).toEqual([['prompt', 120], ['completion', 30]]);
    const overhead = samples.find((s) => s.name === 'tollgate_overhead_seconds_bucket' && s.labels.le === '0.00025');
    expect(overhead?.value).toBe(1);
  });
});

describe('createMetrics registry', () => {
  it('uses its own registry, never prom-client\'s global one', () => {
    const first = createMetrics();
    const second = createMetrics();
    expect(first.registry).not.toBe(globalRegistry);
    expect(globalRegistry.getSingleMetric('tollgate_requests_total')).toBeUndefined();
    expect(first.registry.getSingleMetric('tollgate_requests_total')).not.toBe(
      second.registry.getSingleMetric('tollgate_requests_total'),
    );
  });

  it('renders with the Prometheus text content type', async () => {
    const { contentType } = await createMetrics().render();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('shares one rendering between concurrent scrapes and renders afresh afterwards', async () => {
    const metrics = createMetrics();
    const original = metrics.registry.metrics.bind(metrics.registry);
    let renders = 0;
    metrics.registry.metrics = () => {
      renders += 1;
      return original();
    };
    const [a, b] = await Promise.all([metrics.render(), metrics.render()]);
    expect(renders).toBe(1);
    expect(a.body).toBe(b.body);
    metrics.recordAuthFailure('missing_key');
    const after = await metrics.render();
    expect(renders).toBe(2);
    expect(after.body).toContain('tollgate_auth_failures_total{reason="missing_key"} 1');
  });
});

describe('forRoute', () => {
  const models = { route: '/v1/models', method: 'GET', upstream: 'inference' };

  it('returns the same pre-bound children for the same route', () => {
    const metrics = createMetrics();
    const route = metrics.forRoute(models);
    expect(metrics.forRoute({ ...models })).toBe(route);
    expect(route.requests(200)).toBe(route.requests(200));
    expect(metrics.forRoute({ ...models, method: 'POST' })).not.toBe(route);
  });

  it('records on the SPEC 8 series of that route', async () => {
    const metrics = createMetrics();
    const route = metrics.forRoute(models);
    route.requests(200).inc();
    route.requests(200).inc();
    route.requests(404).inc();
    route.duration.observe(0.2);
    route.ttfb.observe(0.1);
    route.overhead.observe(0.0004);
    route.inflight.inc();
    route.inflight.inc();
    route.inflight.dec();
    route.validationFailures.inc();
    const samples = parseSamples((await metrics.render()).body);
    const value = (name: string, labels: Record<string, string>): number | undefined =>
      samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()))?.value;
    expect(value('tollgate_requests_total', { ...models, status: '200' })).toBe(2);
    expect(value('tollgate_requests_total', { ...models, status: '404' })).toBe(1);
    expect(value('tollgate_request_duration_seconds_count', models)).toBe(1);
    expect(value('tollgate_upstream_ttfb_seconds_sum', { route: '/v1/models', upstream: 'inference' })).toBe(0.1);
    expect(value('tollgate_overhead_seconds_bucket', { route: '/v1/models', le: '0.0005' })).toBe(1);
    expect(value('tollgate_inflight_requests', { route: '/v1/models' })).toBe(1);
    expect(value('tollgate_validation_failures_total', { route: '/v1/models' })).toBe(1);
  });
});

describe('teamProject label guard', () => {
  it('keeps the first maxTeamProjects pairs and folds later ones into __other__', () => {
    const metrics = createMetrics({ maxTeamProjects: 2 });
    expect(metrics.teamProject('team-a', 'x')).toEqual({ team: 'team-a', project: 'x' });
    expect(metrics.teamProject('team-a', 'y')).toEqual({ team: 'team-a', project: 'y' });
    expect(metrics.teamProject('team-b', 'x')).toEqual({ team: '__other__', project: '__other__' });
    expect(metrics.teamProject('team-a', 'x')).toEqual({ team: 'team-a', project: 'x' });
  });

  it('returns the same object for a known pair (no allocation per request)', () => {
    const metrics = createMetrics();
    expect(metrics.teamProject('team-a', 'prod')).toBe(metrics.teamProject('team-a', 'prod'));
  });

  it('defaults to 500 distinct pairs (SPEC 3 metrics.maxTeamProjects)', () => {
    const metrics = createMetrics();
    for (let i = 0; i < 500; i += 1) expect(metrics.teamProject('t', `p${i}`).project).toBe(`p${i}`);
    expect(metrics.teamProject('t', 'p500').project).toBe('__other__');
  });
});

describe('series known before any request', () => {
  it('exist at 0 so that the first error shows as an increase', async () => {
    const metrics = createMetrics({ knownLabels: { upstreams: ['service'], authFailureReasons: ['missing'], stores: ['redis'] } });
    const { body } = await metrics.render();
    const lines = body.split('\n').filter((l) => !l.startsWith('#'));
    expect(lines).toContain('tollgate_auth_failures_total{reason="missing"} 0');
    expect(lines).toContain('tollgate_store_errors_total{store="redis"} 0');
    expect(lines).toContain('tollgate_upstream_errors_total{upstream="service",kind="timeout"} 0');
    expect(lines).toContain('tollgate_ratelimit_rejections_total{scope="project",limit="tokensPerDay"} 0');
  });
});
