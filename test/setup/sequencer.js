const { readFileSync, readdirSync, statSync } = require('node:fs');
const { dirname, join, relative, sep } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest runs the longest test files first, as timed on the last run; with no timings (a fresh
 * clone, a new cache) it goes by file size, and a surface's test file is three lines that run the
 * `*.cases.ts` beside it (test/helpers/cases.ts). So a file without timings is weighed by the
 * seconds it took in a quiet run of the whole suite (docs/lab/test-suite.md), or else by the
 * cases it runs: the big surfaces start first, longest first, instead of one of them being left
 * for last on one worker while the other idles. The browser's pages take far longer than their
 * cases' size says, which is why sizes alone would start the frontend last.
 */
const SECONDS = {
  'test/limits/limits.test.ts': 30,
  'test/domain/domain.test.ts': 23,
  'test/frontend/frontend.test.ts': 23,
  'test/graphql/graphql.test.ts': 20,
};
/** What a second of a surface's cases is, in bytes of them, over the suite: for a file not timed above. */
const BYTES_A_SECOND = 8_000;

class SurfaceSequencer extends Sequencer {
  sort(tests) {
    const weight = new Map(tests.map((test) => [test.path, this.time(test) === undefined ? secondsOf(test.path) : 0]));
    const untimedFirst = super.sort(tests);
    const untimed = untimedFirst.filter((test) => this.time(test) === undefined && !this.hasFailed(test));
    untimed.sort((a, b) => weight.get(b.path) - weight.get(a.path));
    let next = 0;
    return untimedFirst.map((test) => (untimed.includes(test) ? untimed[next++] : test));
  }
}

function secondsOf(testPath) {
  return SECONDS[relative(join(__dirname, '..', '..'), testPath).split(sep).join('/')] ?? withCases(testPath) / BYTES_A_SECOND;
}

function withCases(testPath) {
  // Only a surface's test file runs the cases beside it (and its neighbours'); another file there is weighed alone.
  const text = readFileSync(testPath, 'utf8');
  const runs = /run\w*CasesIn\(__dirname((?:,\s*'[\w./-]+')*)\)/.exec(text);
  if (!runs) return statSync(testPath).size;
  const dir = dirname(testPath);
  const folders = [dir, ...[...runs[1].matchAll(/'([\w./-]+)'/g)].map(([, name]) => join(dir, name))];
  // A surface's slow test file runs its `*.slow.cases.ts`, the other its `*.cases.ts` (test/helpers/cases.ts).
  const slow = testPath.endsWith('.slow.test.ts');
  const sizeOfCases = (folder) =>
    readdirSync(folder)
      .filter((name) => name.endsWith('.cases.ts') && name.endsWith('.slow.cases.ts') === slow)
      .reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);
  return statSync(testPath).size + folders.reduce((sum, folder) => sum + sizeOfCases(folder), 0);
}

module.exports = SurfaceSequencer;
