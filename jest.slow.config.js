/**
 * `npm run test:slow`: the tests that restart servers of their own under load
 * (every `*.slow.test.ts` under test/), apart from `npm test`, since each takes a minute or more. They own
 * their databases, so the run needs no template; one worker, so that their load is the
 * machine's only one.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['**/*.slow.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 300_000,
  maxWorkers: 1,
};
