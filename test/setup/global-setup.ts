import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Builds the run's migrated template in a process of its own: creating a PGlite from nothing
 * takes several hundred MB that would otherwise stay with Jest's main process for the whole run.
 */
export default function globalSetup(): void {
  const output = execFileSync(process.execPath, ['-r', join(__dirname, 'register-ts.js'), join(__dirname, 'build-template.ts')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  Object.assign(process.env, JSON.parse(output) as Record<string, string>);
}
