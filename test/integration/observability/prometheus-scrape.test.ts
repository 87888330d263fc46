import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createMetrics } from '../../../src/observability/index.js';
import { recordSampleTraffic, serveMetrics, type MetricsTarget } from '../../helpers/metrics-target.js';
import {
  ALERTS_PATH,
  extractAlertExpressions,
  extractDashboardQueries,
  extractDashboardVariables,
  startPrometheus,
  type TestPrometheus,
} from '../../helpers/prometheus.js';

// A real Prometheus scrapes createMetrics() output; every dashboard and alert query must run.
describe('a real Prometheus scraping the metrics', () => {
  let target: MetricsTarget;
  let prometheus: TestPrometheus;

  beforeAll(async () => {
    const metrics = createMetrics();
    recordSampleTraffic(metrics);
    target = await serveMetrics(metrics);
    prometheus = await startPrometheus({ targets: [target.target], scrapeIntervalSeconds: 1, ruleFiles: [ALERTS_PATH] });
    // Two scrapes, so rate() and increase() have two samples to work with.
    await prometheus.waitForScrape({ metric: 'tollgate_requests_total', scrapes: 2 });
  });

  afterAll(async () => {
    await prometheus?.stop();
    await target?.close();
  });

  it('scrapes the target with up == 1', async () => {
    const answer = await prometheus.query('up');
    expect(answer.data?.result.map((r) => [r.metric.instance, r.value?.[1]])).toEqual([[target.target, '1']]);
  });

  it.each(extractDashboardQueries().map((q) => [`${q.panel} ${q.refId}`, q.promql] as const))(
    'dashboard query "%s" runs and returns series',
    async (_panel, promql) => {
      const answer = await prometheus.query(promql);
      expect({ status: answer.status, error: answer.error }).toEqual({ status: 'success', error: undefined });
      expect(answer.data?.result.length ?? 0).toBeGreaterThan(0);
    },
  );

  it.each(extractDashboardVariables().map((v) => [v.name, v] as const))('variable %s lists the recorded values', async (_name, variable) => {
    const answer = await prometheus.query(variable.promql);
    expect(answer.status).toBe('success');
    const expected = { instance: target.target, team: 'team-a', project: 'prod', model: 'llama-3' }[variable.name];
    expect(answer.data?.result.map((r) => r.metric[variable.label])).toEqual([expected]);
  });

  it.each(extractAlertExpressions().map((r) => [r.alert, r.expr] as const))('alert %s expression runs', async (_alert, expr) => {
    const answer = await prometheus.query(expr);
    expect({ status: answer.status, error: answer.error }).toEqual({ status: 'success', error: undefined });
  });

  it('evaluates every alert rule of alerts.yml without error', async () => {
    const rules = await prometheus.evaluatedRules();
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(
      extractAlertExpressions().map((r) => [r.alert, 'ok', '']),
    );
  });
});
