import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes a scenario's figures as JSON under test/bench/results/, named by scenario and time; returns the file. */
export function writeResult(scenario: string, figures: unknown): string {
  const directory = join(__dirname, '..', '..', '..', 'test', 'bench', 'results');
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `${scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(figures, null, 2));
  return file;
}

/** The p-th percentile of ascending values, NaN for none. */
export const percentile = (sorted: number[], p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN);

/** `HIT 1,234 · MISS 5`: answers by X-Cache, most first. */
export const cacheCounts = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([verdict, count]) => `${verdict} ${count.toLocaleString('en')}`)
    .join(' · ');

/** HITs over every answer counted, 0 when none carried X-Cache. */
export const hitRatio = (counts: Record<string, number>): number => {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return total ? (counts.HIT ?? 0) / total : 0;
};
