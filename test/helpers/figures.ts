/**
 * Prints what a test measured (counts, timings) only when TEST_FIGURES=1, so that `npm test` stays
 * quiet; the figures in the README and docs/ come from runs with it set.
 */
export function printFigure(...parts: unknown[]): void {
  if (process.env.TEST_FIGURES === '1') console.log(...parts);
}
