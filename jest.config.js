const { swcOptions } = require('./scripts/transpile');

/**
 * Tests run the TypeScript sources transpiled file by file by swc, as `npm run build` does
 * (scripts/transpile.js), keeping the decorator metadata TypeGraphQL and TypeORM read: a
 * hundredth of what TypeScript's own transpiler takes. `npm run lint` type-checks the tests.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The tests that restart servers under load run apart: `npm run test:slow` (jest.slow.config.js).
  testPathIgnorePatterns: ['/node_modules/', '\\.slow\\.test\\.ts$'],
  setupFiles: ['reflect-metadata'],
  // Each file stops the embedded databases it kept for reuse, rather than leave them to the next.
  setupFilesAfterEnv: ['<rootDir>/test/setup/after-env.ts'],
  // One migrated database for the run, copied per test file (test/setup/database-template.ts).
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60_000,
  // The big surfaces first, even on a run with no timings from the last (a fresh clone).
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  // Two workers on a two-core machine: test files spend much of their time waiting on sockets.
  // `npm test` runs Node with --liftoff-only, which the workers inherit: PGlite's WebAssembly is
  // then never optimised in the background, which cost a test file more CPU than it saved, and
  // a worker's peak memory is 100-190 MB lower (docs/lab/test-suite.md, the suite's third pass).
  maxWorkers: 2,
  // A worker does not give back all a test file's gateways and PGlites took. Jest weighs only its
  // JavaScript heap, not the PGlite memories beside it, so the limit sits below what a surface's
  // file leaves: the worker is replaced after each one instead of growing from file to file.
  workerIdleMemoryLimit: '150MB',
  transform: {
    '^.+\\.ts$': ['@swc/jest', swcOptions()],
  },
};
