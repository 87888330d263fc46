import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { chosenFolders } from './test/mutation-folders.js';
import base from './vitest.config.js';

/**
 * The tests Stryker runs (`npm run mutation`): once for per-test coverage, then per mutant only
 * the tests that reached it. A mutant re-runs each covering test file from its beforeAll, so a
 * slow file costs its start-up per mutant: each folder lists its unit tests plus the
 * integration files that start one gateway (memory store, SQLite, one Redis or one PostgreSQL
 * database). Tests that restart servers, run several instances or wait on deadlines are listed
 * only where they are what tests a folder's code: the Redis limit store (outage, crash, cluster),
 * the ownership registry and the ledger writer (database outage), key sync and runtime admin keys
 * (several instances). `isolate: false` keeps the imported app between files and runs (the
 * mutants switch at run time, so no module needs re-importing): half the time per file here.
 */
const tests = [...new Set(chosenFolders(process.env.MUTATION_FOLDER).flatMap((folder) => folder.tests))];

/**
 * Unit test files before integration files, and of the unit tests those that spawn python3 (a
 * whole python3 run before their first comparison) last. Stryker stops a mutant's run at its
 * first failing test, and vitest's own order puts long and last-failed files first: a mutant a
 * unit test kills in milliseconds would first wait for a gateway to start.
 */
class UnitTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => (!spec.moduleId.includes('/test/unit/') ? 2 : spec.moduleId.endsWith('-python.test.ts') ? 1 : 0);
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

// Spread, not mergeConfig: that would append these lists to the base's include and reporters.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: tests,
    isolate: false,
    sequence: { ...base.test?.sequence, sequencer: UnitTestsFirst },
    reporters: ['default'],
  },
});
