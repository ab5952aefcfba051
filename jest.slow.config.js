/**
 * `npm run test:slow` (every `*.slow.test.ts` under test/), apart from `npm test`: the tests that
 * restart servers of their own under load, a minute or more each, and the cases a surface leaves
 * out of `npm test` for what they wait on (`*.slow.cases.ts`: gateway processes started and
 * stopped, catalogues of 10,000 to 100,000 pets, the TypeScript compiler; test/helpers/cases.ts).
 * The run's migrated template is made as for `npm test`, for the surfaces' cases; one worker, so
 * that the restarts' load is the machine's only one.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['**/*.slow.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300_000,
  maxWorkers: 1,
};
