/** Jest runs TypeScript through swc (no type-checking: `npm run typecheck` does that). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] },
  // Integration suites start real node processes; give them room on a 2-core machine.
  testTimeout: 60000,
  maxWorkers: 2,
};
