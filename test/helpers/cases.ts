import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Cases that wait on processes, whole catalogues or a compiler run in `npm run test:slow`, apart from `npm test`. */
const SLOW_CASES = '.slow.cases.ts';

/**
 * Runs every `*.cases.ts` in `dir` within the calling test file, each in a `describe` named after
 * it. Jest evaluates every test file's modules afresh, the whole gateway included, at about two
 * seconds of CPU a file; a surface's cases in one test file load them once. Each part still
 * starts its own app on its own database, and, loaded inside its `describe`, its hooks apply to its
 * own tests only, as they did in a file of their own. `neighbours` are other folders (relative to
 * `dir`) whose cases run here too, named `<folder>/<case>`: a surface of a few cases shares a
 * larger one's file rather than load the gateway for itself. The slow cases (`*.slow.cases.ts`) are left to the
 * surface's `<surface>.slow.test.ts` (runSlowCasesIn).
 */
export function runCasesIn(dir: string, ...neighbours: string[]): void {
  runEach(dir, neighbours, (file) => file.endsWith('.cases.ts') && !file.endsWith(SLOW_CASES));
}

/** Runs every `*.slow.cases.ts` in `dir` (and its `neighbours`) the same way, for the surface's `<surface>.slow.test.ts`. */
export function runSlowCasesIn(dir: string, ...neighbours: string[]): void {
  runEach(dir, neighbours, (file) => file.endsWith(SLOW_CASES));
}

function runEach(dir: string, neighbours: string[], included: (file: string) => boolean): void {
  runFolder(dir, '', included);
  for (const neighbour of neighbours) runFolder(join(dir, neighbour), `${basename(neighbour)}/`, included);
}

function runFolder(folder: string, prefix: string, included: (file: string) => boolean): void {
  for (const file of readdirSync(folder).filter(included).sort()) {
    describe(prefix + file.replace(/(\.slow)?\.cases\.ts$/, ''), () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(join(folder, file));
    });
  }
}
