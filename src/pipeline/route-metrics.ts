import type { Metrics, RouteMetrics } from '../observability/index.js';
import type { RouteSpec } from '../proxy/index.js';

/**
 * Each route's metric children, per method, found without building anything: forRoute() takes
 * a label object and builds a key string per call. Routes are objects of the route table and
 * only their allowed methods get this far (others are answered 405), so this stays small.
 */
export class RouteMetricsCache {
  private readonly byRoute = new Map<RouteSpec, Map<string, RouteMetrics>>();

  constructor(private readonly metrics: Metrics) {}

  of(route: RouteSpec, method: string): RouteMetrics {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) {
      byMethod = new Map();
      this.byRoute.set(route, byMethod);
    }
    let found = byMethod.get(method);
    if (!found) {
      found = this.metrics.forRoute({ route: route.template, method, upstream: route.upstream });
      byMethod.set(method, found);
    }
    return found;
  }
}
