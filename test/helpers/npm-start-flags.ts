import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node flags `npm start` gives the gateway (package.json: every flag between `node` and the
 * script), for the bench and the soak to start it as deployed. Read from the compiled file's
 * checkout (dist/test/helpers → the package root).
 */
export function npmStartNodeFlags(): string[] {
  const packageJson = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  const command = packageJson.scripts.start.split('&&').at(-1)?.trim().split(/\s+/) ?? [];
  return command[0] === 'node' ? command.slice(1).filter((word) => word.startsWith('--')) : [];
}
