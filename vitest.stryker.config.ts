import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests Stryker runs (`npm run mutation`): once for per-test coverage, then per mutant only
 * the tests that reached it. A mutant re-runs each covering test file from scratch (its
 * beforeAll too), so the slow files would cost their start-up per mutant: this list keeps the
 * unit tests plus the integration tests that start one gateway on the memory store, SQLite,
 * one Redis or one PostgreSQL database. Left out: outage, crash, flood, multi-instance and
 * cluster tests (they restart servers and wait on deadlines; the guards they reach are reached
 * by the files below), Prometheus/promtool, bench, container and tooling tests.
 */
const INTEGRATION = [
  'admin/keys-api', 'admin/teams-api', 'admin/roles', 'admin/malformed-input', 'admin/route-table',
  'gateway/auth', 'gateway/chat', 'gateway/default-project', 'gateway/identity-headers', 'gateway/routing',
  'limits/gateway-limits', 'limits/team-limits', 'limits/redis-limiter',
  'metering/budgets', 'metering/gateway-usage', 'metering/ledger-identity', 'metering/monthly-budget',
  'metering/stream-metering', 'metering/unfinished-streams',
  'ownership/ownership-modes', 'ownership/ownership-sqlite',
  'store/sqlite-store', 'store/postgres-contract',
].map((name) => `test/integration/${name}.test.ts`);

const UNIT = ['admin', 'auth', 'limits', 'metering', 'ownership', 'store'].map((dir) => `test/unit/${dir}/**/*.test.ts`);

// Spread, not mergeConfig: that would append these lists to the base's include and reporters.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [...UNIT, 'test/unit/calendar.test.ts', 'test/unit/error-catalogue.test.ts', ...INTEGRATION],
    reporters: ['default'],
  },
});
