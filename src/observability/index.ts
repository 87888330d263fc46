export {
  createMetrics,
  LATENCY_BUCKETS,
  OVERHEAD_BUCKETS,
  OTHER_LABEL,
  type KnownLabels,
  type Metrics,
  type MetricsOptions,
  type RequestLabels,
  type RouteMetrics,
  type TeamProject,
  type UpstreamTargetState,
} from './metrics.js';
export { aggregateSeries, seriesOf, type ProcessSeries } from './cluster-metrics.js';
export { createLogger, type Logger } from './logger.js';
export { requestIdFor } from './request-id.js';
export { createMetricsEndpoint } from './metrics-endpoint.js';
export { createOutboxMetrics, type OutboxMetrics, type OutboxSinkFigures } from './outbox-metrics.js';
