import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const configDir = fileURLToPath(new URL('../../config/', import.meta.url));
export const DASHBOARD_PATH = join(configDir, 'grafana', 'tollgate.json');
export const ALERTS_PATH = join(configDir, 'prometheus', 'alerts.yml');
export const PROMETHEUS_CONFIG_PATH = join(configDir, 'prometheus', 'prometheus.yml');

const GRAFANA_BUILTINS: Record<string, string> = {
  __rate_interval: '1m',
  __interval: '1m',
  __interval_ms: '60000',
  __range: '1h',
  __range_s: '3600',
  __range_ms: '3600000',
};

/** Replaces Grafana variables with values Prometheus accepts: durations for built-ins, `.*` for the rest. */
export function substituteGrafanaVariables(expr: string): string {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g, (_m, a?: string, b?: string, c?: string) => {
    const name = a ?? b ?? c ?? '';
    return GRAFANA_BUILTINS[name] ?? '.*';
  });
}

/** The `tollgate_*` metric names an expression mentions (histogram series suffixes included). */
export function metricNamesIn(expr: string): string[] {
  return [...new Set(expr.match(/tollgate_[a-z_]+/g) ?? [])];
}

export interface DashboardQuery {
  panel: string;
  refId: string;
  /** As written in the dashboard. */
  expr: string;
  /** With template variables substituted, ready for Prometheus. */
  promql: string;
}

interface PanelJson {
  title?: string;
  panels?: PanelJson[];
  targets?: { refId?: string; expr?: string }[];
}

function collectQueries(panels: PanelJson[], out: DashboardQuery[]): void {
  for (const panel of panels) {
    for (const target of panel.targets ?? []) {
      if (typeof target.expr !== 'string') continue;
      out.push({
        panel: panel.title ?? '',
        refId: target.refId ?? '',
        expr: target.expr,
        promql: substituteGrafanaVariables(target.expr),
      });
    }
    // Collapsed rows keep their panels nested.
    collectQueries(panel.panels ?? [], out);
  }
}

/** Every `targets[].expr` of the dashboard's panels, including those nested in rows. */
export function extractDashboardQueries(path = DASHBOARD_PATH): DashboardQuery[] {
  const dashboard = JSON.parse(readFileSync(path, 'utf8')) as { panels?: PanelJson[] };
  const out: DashboardQuery[] = [];
  collectQueries(dashboard.panels ?? [], out);
  return out;
}

export interface DashboardVariable {
  name: string;
  /** The `label_values(selector, label)` definition. */
  definition: string;
  selector: string;
  label: string;
  /** `count by (label) (selector)` with variables substituted: yields the values Grafana would list. */
  promql: string;
}

/** The dashboard's query variables (`label_values(selector, label)`). */
export function extractDashboardVariables(path = DASHBOARD_PATH): DashboardVariable[] {
  const dashboard = JSON.parse(readFileSync(path, 'utf8')) as {
    templating?: { list?: { name: string; type: string; query?: string | { query?: string } }[] };
  };
  const out: DashboardVariable[] = [];
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const definition = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    const match = /^label_values\((.+),\s*(\w+)\)$/s.exec(definition.trim());
    const selector = match?.[1];
    const label = match?.[2];
    if (!selector || !label) throw new Error(`variable ${variable.name}: unsupported query ${definition}`);
    out.push({ name: variable.name, definition, selector, label, promql: substituteGrafanaVariables(`count by (${label}) (${selector})`) });
  }
  return out;
}

export interface AlertRule {
  group: string;
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Every alerting rule in a Prometheus rules file. */
export function extractAlertExpressions(path = ALERTS_PATH): AlertRule[] {
  const file = parse(readFileSync(path, 'utf8')) as {
    groups?: { name: string; rules?: Partial<Omit<AlertRule, 'group'>>[] }[];
  };
  return (file.groups ?? []).flatMap((group) =>
    (group.rules ?? [])
      .filter((rule) => typeof rule.alert === 'string')
      .map((rule) => ({
        group: group.name,
        alert: rule.alert ?? '',
        expr: rule.expr ?? '',
        ...(rule.for === undefined ? {} : { for: rule.for }),
        labels: rule.labels ?? {},
        annotations: rule.annotations ?? {},
      })),
  );
}

