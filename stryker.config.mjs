// Mutation testing of the domain rules against the fast tests alone (test/unit/, no database):
// `npm run test:mutation` runs this through scripts/mutation-score.ts, which prints the score per
// file and `figure mutation-score-domain`, and fails below 90%. Not part of `npm test`.
// The sandbox and the JSON report live under .tmp/ (git-ignored).

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: {
    configFile: 'test/unit/vitest.mutation.config.ts',
    related: true,
  },
  mutate: ['domain/{picking,orders,money,codes,loyalty}/**/*.ts', '!domain/**/*.d.ts'],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'json', 'progress'],
  // The mutants no test detects are listed by scripts/mutation-score.ts, one line each.
  clearTextReporter: { allowColor: false, reportMutants: false, reportTests: false, reportScoreTable: true },
  jsonReporter: { fileName: '.tmp/mutation/report.json' },
  tempDirName: '.tmp/stryker',
  cleanTempDir: 'always',
  ignorePatterns: ['.tmp', 'dist', 'coverage', '.data', 'reports'],
  thresholds: { high: 95, low: 90, break: null },
};
