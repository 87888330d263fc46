import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Histogram } from 'prom-client';
import { parse } from 'yaml';
import { createMetrics } from '../../../src/observability/index.js';
import {
  ALERTS_PATH,
  DASHBOARD_PATH,
  PROMETHEUS_CONFIG_PATH,
  checkPromqlSyntax,
  extractAlertExpressions,
  extractDashboardQueries,
  extractDashboardVariables,
  metricNamesIn,
  runPromtool,
  substituteGrafanaVariables,
} from '../../helpers/prometheus.js';

/** Every series name the registry can expose: histograms as _bucket/_sum/_count too. */
function knownSeriesNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of createMetrics().registry.getMetricsAsArray()) {
    names.add(metric.name);
    if (metric instanceof Histogram) for (const s of ['_bucket', '_sum', '_count']) names.add(metric.name + s);
  }
  return names;
}

const known = knownSeriesNames();
const unknownNames = (expr: string): string[] => metricNamesIn(expr).filter((n) => !known.has(n));
const grafanaDir = new URL('../../../config/grafana/', import.meta.url);
const dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as {
  uid: string;
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: unknown }[] };
  panels: Panel[];
};
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { datasource?: { uid: string } }[];
  panels?: Panel[];
}
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

describe('config/prometheus', () => {
  it('prometheus.yml passes promtool check config (which loads alerts.yml)', async () => {
    const result = await runPromtool(['check', 'config', PROMETHEUS_CONFIG_PATH]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('SUCCESS: 1 rule files found');
  });

  it('prometheus.yml scrapes tollgate:8080 at /metrics and loads alerts.yml', () => {
    const config = parse(readFileSync(PROMETHEUS_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
    expect(config.rule_files).toEqual(['alerts.yml']);
    expect(config.scrape_configs).toEqual([
      { job_name: 'tollgate', metrics_path: '/metrics', scheme: 'http', static_configs: [{ targets: ['tollgate:8080'] }] },
    ]);
    expect(readFileSync(PROMETHEUS_CONFIG_PATH, 'utf8')).toMatch(/# authorization:\n\s*#\s+type: Bearer/);
  });

  it('alerts.yml passes promtool check rules', async () => {
    const result = await runPromtool(['check', 'rules', ALERTS_PATH]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('SUCCESS: 7 rules found');
  });

  it('alerts on upstream error ratio, p99 latency, 429 surge, store errors and instance down', () => {
    expect(extractAlertExpressions().map((r) => r.alert)).toEqual([
      'TollgateUpstreamErrorRatioHigh',
      'TollgateUpstreamNoTargetUp',
      'TollgateP99LatencyHigh',
      'TollgateOverheadHigh',
      'TollgateRateLimitSurge',
      'TollgateStoreErrors',
      'TollgateInstanceDown',
    ]);
    expect(extractAlertExpressions().find((r) => r.alert === 'TollgateInstanceDown')?.expr).toBe('up{job="tollgate"} == 0');
  });

  it.each(extractAlertExpressions().map((r) => [r.alert, r] as const))('%s has for, a severity and actionable annotations', (_name, rule) => {
    expect(rule.for).toMatch(/^\d+m$/);
    expect(['warning', 'critical']).toContain(rule.labels.severity);
    expect(rule.annotations.summary?.length ?? 0).toBeGreaterThan(20);
    expect(rule.annotations.description?.length ?? 0).toBeGreaterThan(100);
  });

  it.each(extractAlertExpressions().map((r) => [r.alert, r.expr] as const))('%s uses only SPEC 8 metric names', (_name, expr) => {
    expect(unknownNames(expr)).toEqual([]);
  });
});

describe('config/grafana/tollgate.json', () => {
  const queries = extractDashboardQueries();

  it('is a schemaVersion 39 dashboard with uid tollgate', () => {
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.uid).toBe('tollgate');
  });

  it('has a Prometheus data source variable and instance, team, project, model variables', () => {
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
      ['DS_PROMETHEUS', 'datasource'],
      ['instance', 'query'],
      ['team', 'query'],
      ['project', 'query'],
      ['model', 'query'],
    ]);
    expect(extractDashboardVariables().map((v) => [v.name, metricNamesIn(v.selector), v.label])).toEqual([
      ['instance', ['tollgate_requests_total'], 'instance'],
      ['team', ['tollgate_tokens_total'], 'team'],
      ['project', ['tollgate_tokens_total'], 'project'],
      ['model', ['tollgate_tokens_total'], 'model'],
    ]);
  });

  it('queries through the ${DS_PROMETHEUS} variable in every panel and target', () => {
    for (const panel of allPanels(dashboard.panels).filter((p) => p.type !== 'row')) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      for (const target of panel.targets ?? []) expect(target.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
    }
  });

  it('gives every panel a unique id', () => {
    const ids = allPanels(dashboard.panels).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a panel query for every SPEC 8 metric', () => {
    const used = new Set(queries.flatMap((q) => metricNamesIn(q.expr)).map((n) => n.replace(/_bucket$/, '')));
    const spec = [...known].filter((n) => n.startsWith('tollgate_') && !/_(bucket|sum|count)$/.test(n));
    expect([...used].sort()).toEqual(spec.sort());
  });

  it('shows p50, p90 and p99 request latency from the duration histogram', () => {
    const latency = queries.filter((q) => q.panel === 'Request latency p50 / p90 / p99').map((q) => q.expr);
    expect(latency.map((e) => /^histogram_quantile\((0\.\d+),/.exec(e)?.[1])).toEqual(['0.5', '0.9', '0.99']);
    for (const expr of latency) expect(metricNamesIn(expr)).toEqual(['tollgate_request_duration_seconds_bucket']);
  });

  it.each(queries.map((q) => [`${q.panel} ${q.refId}`, q.expr] as const))('panel "%s" uses only SPEC 8 metric names', (_p, expr) => {
    expect(metricNamesIn(expr).length).toBeGreaterThan(0);
    expect(unknownNames(expr)).toEqual([]);
  });

  it('every panel and variable query is valid PromQL (promtool check rules)', async () => {
    const exprs = [...queries.map((q) => q.promql), ...extractDashboardVariables().map((v) => v.promql)];
    expect(exprs.length).toBeGreaterThan(20);
    const result = await checkPromqlSyntax(exprs);
    expect(result.stdout + result.stderr).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(result.code).toBe(0);
  });
});

describe('config/grafana/provisioning', () => {
  it('provides the dashboard from the documented folder', () => {
    const file = parse(readFileSync(new URL('provisioning/dashboards/tollgate.yml', grafanaDir), 'utf8')) as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(file.providers.map((p) => [p.type, p.options.path])).toEqual([['file', '/var/lib/grafana/dashboards/tollgate']]);
    expect(readFileSync(new URL('README.md', grafanaDir), 'utf8')).toContain(
      'tollgate.json:/var/lib/grafana/dashboards/tollgate/tollgate.json',
    );
  });

  it('provides a default Prometheus data source', () => {
    const file = parse(readFileSync(new URL('provisioning/datasources/prometheus.yml', grafanaDir), 'utf8')) as {
      datasources: { type: string; isDefault: boolean }[];
    };
    expect(file.datasources.map((d) => [d.type, d.isDefault])).toEqual([['prometheus', true]]);
  });
});

describe('expression checks catch mistakes', () => {
  it('substitutes Grafana variables with values Prometheus accepts', () => {
    expect(substituteGrafanaVariables('sum(rate(x{team=~"$team",p=~"${project:regex}"}[$__rate_interval])) + increase(x[$__range])')).toBe(
      'sum(rate(x{team=~".*",p=~".*"}[1m])) + increase(x[1h])',
    );
  });

  it('finds queries nested in collapsed rows and flags unknown metric names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-dash-'));
    try {
      const file = join(dir, 'd.json');
      const nested = { type: 'row', title: 'r', panels: [{ title: 'inner', targets: [{ refId: 'A', expr: 'tollgate_requets_total' }] }] };
      writeFileSync(file, JSON.stringify({ panels: [nested] }));
      const found = extractDashboardQueries(file);
      expect(found.map((q) => [q.panel, q.refId, q.expr])).toEqual([['inner', 'A', 'tollgate_requets_total']]);
      expect(unknownNames(found[0]?.expr ?? '')).toEqual(['tollgate_requets_total']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects invalid PromQL', async () => {
    const result = await checkPromqlSyntax(['sum(rate(tollgate_requests_total[1m])']);
    expect(result.code).not.toBe(0);
  });
});
