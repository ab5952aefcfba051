/**
 * Tests run the TypeScript sources through ts-jest, file by file (isolatedModules), keeping the
 * decorator metadata TypeGraphQL and TypeORM read. `npm run lint` type-checks the tests.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  setupFiles: ['reflect-metadata'],
  // One migrated database for the run, copied per test file (test/setup/database-template.ts).
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60_000,
  // Two workers on a two-core machine: test files spend much of their time waiting on sockets.
  // Each file loads the whole gateway and a PGlite afresh, and a worker does not give all of that
  // back; one that ends a file above the limit is replaced, which keeps each process small.
  maxWorkers: 2,
  workerIdleMemoryLimit: '512MB',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
};
