import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The suite as Stryker runs it (`npm run mutation`): once for coverage, then per mutant only the
 * tests that reach it. No JSON report (that file is for .ci/run), and without the tests that
 * drive a real Prometheus or promtool: they check the metrics and dashboards, not the guards
 * being mutated, and need tools a developer machine may lack. The runner sets the pool itself.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      reporters: ['default'],
      exclude: [
        ...configDefaults.exclude,
        'test/integration/observability/gateway-prometheus.test.ts',
        'test/integration/observability/prometheus-scrape.test.ts',
        'test/unit/observability/monitoring-config.test.ts',
        'test/unit/observability/metrics.test.ts',
      ],
    },
  }),
);
