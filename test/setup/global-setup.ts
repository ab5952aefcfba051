import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TEST_CHROMIUM } from './test-chromium';

const run = promisify(execFile);
/** Runs a setup script of this folder in a Node process of its own, and returns what it prints. */
const script = (name: string) => run(process.execPath, ['-r', join(__dirname, 'register-ts.js'), join(__dirname, name)], { encoding: 'utf8' });

/**
 * Builds the run's migrated template in a process of its own: creating a PGlite from nothing
 * takes several hundred MB that would otherwise stay with Jest's main process for the whole run.
 * Meanwhile the browser tests' Chromium is unpacked, once for both workers, which find it (or the
 * one line saying why there is none) in the environment they inherit.
 */
export default async function globalSetup(): Promise<void> {
  const [template, chromium] = await Promise.all([
    script('build-template.ts'),
    script('extract-chromium.ts').then(
      ({ stdout }) => stdout,
      (error: { stderr?: string; message: string }) => JSON.stringify({ problem: error.stderr?.trim() || error.message.split('\n')[0] }),
    ),
  ]);
  Object.assign(process.env, JSON.parse(template.stdout) as Record<string, string>, { [TEST_CHROMIUM]: chromium });
}
