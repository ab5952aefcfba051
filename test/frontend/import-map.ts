import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The export conditions a browser's bundler would pick: the production, browser ES module build. */
const CONDITIONS = ['production', 'browser', 'module', 'import', 'default'];

type Exports = string | null | { [key: string]: Exports };

function pick(target: Exports): string | undefined {
  if (typeof target === 'string') return target;
  if (target === null) return undefined;
  for (const condition of CONDITIONS) {
    const chosen = condition in target ? pick(target[condition]) : undefined;
    if (chosen !== undefined) return chosen;
  }
  return undefined;
}

const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

/**
 * A browser import map for these npm packages as installed, so that a page can import them as a
 * bundled app would, with no bundler: each package's exports (or its `module` entry), its subpaths,
 * and a prefix for files reached by path. URLs are `base` + the file's path under `root`.
 */
export function importMap(packages: string[], root: string, base: string): { imports: Record<string, string> } {
  const imports: Record<string, string> = {};
  const url = (file: string) => base + relative(root, file).split('\\').join('/');
  for (const name of packages) {
    const dir = packageDir(name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: Exports; module?: string; main?: string };
    const exported = manifest.exports;
    const subpaths: Record<string, Exports> =
      exported === undefined
        ? { '.': manifest.module ?? manifest.main ?? 'index.js' }
        : typeof exported === 'string' || exported === null || !Object.keys(exported).some((key) => key.startsWith('.'))
          ? { '.': exported }
          : exported;
    for (const [subpath, target] of Object.entries(subpaths)) {
      const file = pick(target);
      if (file === undefined || subpath.includes('*') || !/\.m?js$/.test(file)) continue;
      imports[name + subpath.slice(1)] = url(join(dir, file));
    }
    imports[`${name}/`] = url(dir) + '/';
  }
  return { imports };
}
