/**
 * TypeScript to JavaScript file by file with swc, by the options in .swcrc: what `npm run build`
 * writes to dist/, what Jest loads (jest.config.js) and what the tests' gateway processes run.
 * A file is transpiled on its own, with no type checking, in milliseconds where `tsc` takes
 * seconds for the whole program; `npm run lint` type-checks (tsc --noEmit).
 */
const { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { basename, dirname, join, relative } = require('node:path');
const { transformSync } = require('@swc/core');

const ROOT = join(__dirname, '..');

/** The options of .swcrc: decorators with their metadata (TypeGraphQL, TypeORM), CommonJS. */
function swcOptions() {
  return JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8'));
}

/** swc's output for one file: its JavaScript, and its source map when `options` ask for one apart. */
function transform(source, filename, options) {
  return transformSync(source, { ...options, filename, swcrc: false });
}

/** One file's JavaScript, with an inline source map. */
function transpile(source, filename, options = swcOptions()) {
  return transform(source, filename, options).code;
}

function typeScriptFiles(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * src/ and ormconfig.ts into `outDir`, laid out as `tsc` lays them (dist/src/main.js,
 * dist/ormconfig.js); returns how many files were written. Each file's source map is written
 * beside it (main.js.map), not inline: V8 keeps every loaded module's source text in the heap,
 * and an inline map would more than double the gateway's; the maps are read only when a logged
 * stack is mapped (src/common/source-stack.ts).
 */
function transpileSources(outDir) {
  const options = { ...swcOptions(), sourceMaps: true };
  const files = [...typeScriptFiles(join(ROOT, 'src')), join(ROOT, 'ormconfig.ts')];
  for (const file of files) {
    const target = join(outDir, relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    const { code, map } = transform(readFileSync(file, 'utf8'), file, options);
    writeIfChanged(`${target}.map`, map);
    writeIfChanged(target, `${code}\n//# sourceMappingURL=${basename(target)}.map\n`);
  }
  return files.length;
}

/**
 * Two `npm start` at once (two instances on one host) both build: a file that is already right is
 * left alone, and a changed one is written whole under another name and renamed, so that a
 * gateway starting beside a build never loads half a file.
 */
function writeIfChanged(path, content) {
  try {
    if (readFileSync(path, 'utf8') === content) return;
  } catch {
    // Not there yet.
  }
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, content);
  renameSync(partial, path);
}

module.exports = { swcOptions, transpile, transpileSources };

if (require.main === module) transpileSources(join(ROOT, 'dist'));
