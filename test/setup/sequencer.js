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
