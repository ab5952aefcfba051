/**
 * Lets plain `node -r` load TypeScript, transpiled file by file as Jest loads it
 * (scripts/transpile.js): for the template build, which runs in a process of its own (see
 * global-setup.ts).
 */
const { readFileSync } = require('node:fs');
const { swcOptions, transpile } = require('../../scripts/transpile');

const options = swcOptions();

require.extensions['.ts'] = (module, filename) => {
  module._compile(transpile(readFileSync(filename, 'utf8'), filename, options), filename);
};
