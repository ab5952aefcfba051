const { readFileSync, readdirSync, statSync } = require('node:fs');
const { dirname, join } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest runs the longest test files first, as timed on the last run; with no timings (a fresh
 * clone, a new cache) it goes by file size, and a surface's test file is three lines that run the
 * `*.cases.ts` beside it (test/helpers/cases.ts). So a file without timings is weighed with the
 * cases it runs: the big surfaces start first, instead of one of them being left for last on one
 * worker while the other idles.
 */
class SurfaceSequencer extends Sequencer {
  sort(tests) {
    const weight = new Map(tests.map((test) => [test.path, this.time(test) === undefined ? withCases(test.path) : 0]));
    const untimedFirst = super.sort(tests);
    const untimed = untimedFirst.filter((test) => this.time(test) === undefined && !this.hasFailed(test));
    untimed.sort((a, b) => weight.get(b.path) - weight.get(a.path));
    let next = 0;
    return untimedFirst.map((test) => (untimed.includes(test) ? untimed[next++] : test));
  }
}

function withCases(testPath) {
  // Only a surface's test file runs the cases beside it; another file there is weighed alone.
  if (!/runCases\w*In\(/.test(readFileSync(testPath, 'utf8'))) return statSync(testPath).size;
  const dir = dirname(testPath);
  // A surface's slow test file runs its `*.slow.cases.ts`, the other its `*.cases.ts` (test/helpers/cases.ts).
  const slow = testPath.endsWith('.slow.test.ts');
  const cases = readdirSync(dir).filter((name) => name.endsWith('.cases.ts') && name.endsWith('.slow.cases.ts') === slow);
  return statSync(testPath).size + cases.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

module.exports = SurfaceSequencer;
