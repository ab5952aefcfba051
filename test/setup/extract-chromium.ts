import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';
import type { TestChromium } from './test-chromium';

/**
 * Unpacks the browser tests' Chromium, in a process of its own (global-setup.ts), and prints where
 * it is: the build the npm package @sparticuz/chromium ships, once per version, into
 * node_modules/.cache beside the embedded database's template. Nothing is taken from the machine:
 * the package's own NSS and expat libraries (its `al2023` archive) and fonts come with it.
 */
const run = promisify(execFile);
const CACHE = join(__dirname, '..', '..', 'node_modules', '.cache', 'petstore-gateway');

function layout(folder: string): TestChromium {
  return { executable: join(folder, 'chromium'), libraries: join(folder, 'al2023', 'lib'), fontConfig: join(folder, 'fonts.conf') };
}

/** Unpacks a .tar.br archive of the package into `folder`: zlib inflates it to a file, tar reads that. */
async function untar(archive: string, folder: string): Promise<void> {
  mkdirSync(folder, { recursive: true });
  const tarFile = `${folder}.tar`;
  await pipeline(createReadStream(archive), createBrotliDecompress(), createWriteStream(tarFile));
  await run('tar', ['-x', '--no-same-owner', '-f', tarFile, '-C', folder]);
  rmSync(tarFile);
}

/** The machine's fonts when it has any, and the package's own (Open Sans) in any case. */
const fontConfig = (folder: string) => `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>${join(folder, 'fonts')}</dir>
  <cachedir>${join(folder, 'fonts-cache')}</cachedir>
</fontconfig>
`;

/**
 * Unpacks into a folder of its own, renamed into place when whole: two runs at once (two
 * checkouts, or `npm test` twice) never see a half-written browser, and the later copy goes.
 */
async function unpack(): Promise<TestChromium> {
  // The package's main file is build/cjs/index.cjs: its archives are in bin/, two folders up.
  const root = join(dirname(require.resolve('@sparticuz/chromium')), '..', '..');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const folder = join(CACHE, `chromium-${version}`);
  if (existsSync(layout(folder).executable)) return layout(folder);
  mkdirSync(CACHE, { recursive: true });
  const staging = mkdtempSync(join(CACHE, `.chromium-${version}-`));
  try {
    // The package unpacks into the system's temporary folder, which it reads from TMPDIR when asked.
    process.env.TMPDIR = staging;
    const { default: chromium } = await import('@sparticuz/chromium');
    await chromium.executablePath();
    await untar(join(root, 'bin', 'al2023.tar.br'), join(staging, 'al2023'));
    writeFileSync(join(staging, 'fonts.conf'), fontConfig(folder));
    renameSync(staging, folder);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(layout(folder).executable)) throw error;
  }
  return layout(folder);
}

unpack().then(
  (chromium) => {
    process.stdout.write(JSON.stringify(chromium));
    process.exit(0);
  },
  (error: unknown) => {
    // One line, which the browser tests repeat as the reason they cannot run.
    process.stderr.write(`@sparticuz/chromium could not be unpacked into ${CACHE}: ${error instanceof Error ? error.message : String(error)}`.split('\n')[0]);
    process.exit(1);
  },
);
