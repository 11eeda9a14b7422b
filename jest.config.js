/**
 * Jest runs TypeScript through ts-jest in transpile-only mode (isolatedModules): fast, and
 * type errors are `npm run typecheck`'s job. Integration suites start real node processes
 * from dist/, which `npm test` builds first (pretest).
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  // Integration suites start real node processes; give them room on a 2-core machine.
  testTimeout: 60000,
  maxWorkers: 2,
  // The suites that must run alone (test/helpers/run-alone.ts) spread over the run.
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
};
