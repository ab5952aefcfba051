/**
 * Tests run the TypeScript sources through ts-jest, file by file (isolatedModules), keeping the
 * decorator metadata TypeGraphQL and TypeORM read. `npm run lint` type-checks the tests.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  setupFiles: ['reflect-metadata'],
  testTimeout: 60_000,
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
};
