import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs every `*.cases.ts` in `dir` within the calling test file, each in a `describe` named after
 * it. Jest evaluates every test file's modules afresh, the whole gateway included, at about half
 * a second a file; a surface's cases in one test file load them once. Each part still starts its
 * own app on its own database, and, loaded inside its `describe`, its hooks apply to its own tests
 * only, as they did in a file of their own.
 */
export function runCasesIn(dir: string): void {
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cases.ts')).sort()) {
    describe(file.replace(/\.cases\.ts$/, ''), () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(join(dir, file));
    });
  }
}
