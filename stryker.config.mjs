import { readFileSync } from 'node:fs';

/**
 * `npm run mutation` mutates the folders of test/mutation-folders.json (MUTATION_FOLDER=<name>:
 * one of them, tested by its own tests only; see vitest.stryker.config.ts). Static mutants are
 * ignored: each would re-run every test.
 */
const folders = JSON.parse(readFileSync(new URL('./test/mutation-folders.json', import.meta.url), 'utf8'));
const name = process.env.MUTATION_FOLDER;
if (name && !folders[name]) throw new Error(`MUTATION_FOLDER=${name}: not one of ${Object.keys(folders).join(', ')}`);
const chosen = name ? [folders[name]] : Object.values(folders);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {

  "packageManager": "npm",
  "testRunner": "vitest",
  "vitest": {
    "configFile": "vitest.stryker.config.ts",
    "related": false
  },
  "checkers": [
    "typescript"
  ],
  "tsconfigFile": "tsconfig.json",
  "typescriptChecker": {
    "prioritizePerformanceOverAccuracy": true
  },
  "coverageAnalysis": "perTest",
  "concurrency": 1,
  "incremental": true,
  "incrementalFile": "reports/mutation/stryker-incremental.json",
  "reporters": [
    "json",
    "html",
    "clear-text",
    "progress"
  ],
  "jsonReporter": {
    "fileName": "reports/mutation/mutation.json"
  },
  "htmlReporter": {
    "fileName": "reports/mutation/mutation.html"
  },
  "thresholds": {
    "high": 85,
    "low": 70,
    "break": null
  },
  "timeoutMS": 10000,
  "tempDirName": ".stryker-tmp",
  "ignorePatterns": [
    "dist",
    ".tmp",
    "reports",
    "data",
    ".stryker-tmp"
  ],
  "ignoreStatic": true,
  "mutate": chosen.flatMap((folder) => folder.mutate)
};
