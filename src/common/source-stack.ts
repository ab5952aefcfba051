import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces in the TypeScript sources' lines, read from the build's source maps only when a
 * stack is written out. Node's `--enable-source-maps` would parse and keep the map of every module
 * it loads (about 12 MB of live heap for the gateway's modules and its dependencies'), for stacks
 * that are rarely written; here a map is read the first time one of its file's frames is.
 *
 * Only the gateway's own files are mapped (its dependencies' frames stay as Node printed them),
 * and a stack Node already mapped (a process run with `--enable-source-maps`) is left alone.
 */
export function originalStack(stack: string): string {
  if (process.sourceMapsEnabled) return stack;
  return stack.replace(FRAME, (frame: string, before: string, file: string, line: string, column: string, after: string) => {
    const origin = originOf(file, Number(line), Number(column));
    return origin ? `${before}${origin}${after}` : frame;
  });
}

/** `    at name (/path/file.js:12:34)` or `    at /path/file.js:12:34`: the location's parts. */
const FRAME = /^(\s+at (?:.+? \()?)((?:file:\/\/)?\/[^():]+\.js):(\d+):(\d+)(\)?)$/gm;

/** The source map of each file looked up so far; null where it has none (or is a dependency's). */
const maps = new Map<string, SourceMap | null>();

/** `/path/src/file.ts:3:5` for a frame's generated location (1-based), when a map knows it. */
function originOf(location: string, line: number, column: number): string | undefined {
  const file = location.startsWith('file://') ? fileURLToPath(location) : location;
  let map = maps.get(file);
  if (map === undefined) {
    map = readSourceMap(file);
    maps.set(file, map);
  }
  // findEntry's positions are 0-based; it answers {} where the map has no entry.
  const entry = map?.findEntry(line - 1, column - 1) as Partial<{ originalSource: string; originalLine: number; originalColumn: number }> | undefined;
  if (entry?.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined) return undefined;
  const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
  return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
}

const INLINE = 'data:application/json;base64,';

/** The map a built file names on its last `sourceMappingURL` line: inline, or a file beside it. */
function readSourceMap(file: string): SourceMap | null {
  if (file.includes('/node_modules/')) return null;
  try {
    const code = readFileSync(file, 'utf8');
    const at = code.lastIndexOf('//# sourceMappingURL=');
    if (at === -1) return null;
    const url = code.slice(at + '//# sourceMappingURL='.length).trim();
    const json = url.startsWith(INLINE) ? Buffer.from(url.slice(INLINE.length), 'base64').toString('utf8') : readFileSync(resolve(dirname(file), url), 'utf8');
    return new SourceMap(JSON.parse(json));
  } catch {
    // A file gone or a map unreadable: the frame stays as Node printed it.
    return null;
  }
}
