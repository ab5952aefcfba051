import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { TEST_CHROMIUM, type TestChromium } from '../setup/test-chromium';

/**
 * Headless, and quiet: no updates, sync or first-run pages reaching for the network. Not the
 * package's own list, which turns web security off and would hide what CORS does to a page.
 */
const ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--headless'];

let launched: Promise<Browser> | undefined;

/** The one line the browser tests fail with when no browser can start. */
class NoBrowser extends Error {
  constructor(why: string) {
    super(`the browser tests cannot start Chromium: ${why.split('\n')[0]}`);
    this.stack = this.message;
  }
}

function testChromium(): TestChromium {
  const handed = process.env[TEST_CHROMIUM];
  if (handed === undefined) throw new NoBrowser(`${TEST_CHROMIUM} is not set (test/setup/global-setup.ts sets it: run the tests through jest)`);
  const chromium = JSON.parse(handed) as TestChromium | { problem: string };
  if ('problem' in chromium) throw new NoBrowser(chromium.problem);
  return chromium;
}

async function launch(): Promise<Browser> {
  const { executable, libraries, fontConfig } = testChromium();
  const searched = [libraries, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  const env = { ...process.env, LD_LIBRARY_PATH: searched, FONTCONFIG_FILE: fontConfig };
  try {
    return await chromium.launch({ executablePath: executable, args: ARGS, env });
  } catch (error) {
    throw new NoBrowser(`${executable} did not start: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The test file's Chromium, started by the first case that asks: each case opens pages of its
 * own (`newPage`, a context each, so no cache, cookie or storage is shared) and closes them, and
 * the surface's test file closes the browser once every case ran (closeChromium).
 */
export function sharedChromium(): Promise<Browser> {
  launched ??= launch();
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
