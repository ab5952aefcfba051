import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, which .ci/run installs: the browser tests drive it, and fail without it. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and quiet: no updates, sync or first-run pages reaching for the network. */
const ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--headless'];

let launched: Promise<Browser> | undefined;

/**
 * The test file's Chromium, started by the first case that asks: each case opens pages of its
 * own (`newPage`, a context each, so no cache, cookie or storage is shared) and closes them, and
 * the surface's test file closes the browser once every case ran (closeChromium).
 */
export function sharedChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    return Promise.reject(new Error(`the browser tests need Debian's Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run installs it)`));
  }
  launched ??= chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return launched;
}

export async function closeChromium(): Promise<void> {
  const browser = launched;
  launched = undefined;
  await (await browser?.catch(() => undefined))?.close();
}

/** The folder of a test's screenshots, under the system's temporary directory (never committed), emptied for this run. */
export function screenshotFolder(name: string): string {
  const folder = join(tmpdir(), 'petstore-browser-tests', name);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  return folder;
}

/** Saves what the page shows now as `<folder>/<step>.png`. */
export async function snap(page: Page, folder: string, step: string): Promise<void> {
  await page.screenshot({ path: join(folder, `${step}.png`) });
}
