/**
 * After `npm ci` / `npm install`: builds, then makes the migrated template a new embedded database
 * starts from (src/db/embedded-template.ts), so that the first `npm start` skips PGlite's initdb
 * and the migrations; with the dev dependencies, it also unpacks the browser tests' Chromium
 * (test/setup/extract-chromium.ts), which `npm test` would otherwise unpack on its first run.
 * Never fails the install: without a template (an install without the dev dependencies, say) a
 * new database is created and migrated at its first start instead, and `npm test` unpacks the
 * browser itself or says in one line why it cannot.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

try {
  require('./transpile').transpileSources(join(ROOT, 'dist'));
} catch (error) {
  console.warn(`No embedded database template made (the build needs the dev dependencies): ${error.message.split('\n')[0]}`);
  process.exit(0);
}
const made = spawnSync(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'embedded-template.js')], { stdio: 'inherit' });
if (made.status !== 0) console.warn('No embedded database template made; the first start creates and migrates its database instead.');

try {
  require.resolve('@sparticuz/chromium');
} catch {
  process.exit(0);
}
const test = (name) => join(ROOT, 'test', 'setup', name);
const unpacked = spawnSync(process.execPath, ['-r', test('register-ts.js'), test('extract-chromium.ts')], { stdio: ['ignore', 'ignore', 'inherit'] });
if (unpacked.status !== 0) console.warn('\nThe browser tests\' Chromium was not unpacked; npm test tries again.');
