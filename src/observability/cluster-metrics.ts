import { AggregatorRegistry, type Registry } from 'prom-client';

/** One process's series as plain JSON: what a cluster worker sends the primary to aggregate. */
export type ProcessSeries = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** This process's series (a worker's answer to the primary). */
export function seriesOf(registry: Registry): Promise<ProcessSeries> {
  return registry.getMetricsAsJSON();
}

/**
 * The exposition of several processes as one: counters and histograms summed, gauges by their
 * own aggregator (sum unless the metric names another), prom-client's default metrics as it says.
 */
export function aggregateSeries(all: readonly ProcessSeries[]): Promise<string> {
  return AggregatorRegistry.aggregate([...all]).metrics();
}
