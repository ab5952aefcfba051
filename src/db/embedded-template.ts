import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MIGRATIONS } from './migrations';

/**
 * A migrated embedded database kept as a PGlite data-directory dump, for a new embedded database
 * (a fresh PGLITE_DATA_DIR, or memory://) to start from: PGlite's initdb and the migrations take
 * most of a first start, loading the dump a second. `npm ci` makes it (postinstall), the test
 * suite's set-up too when it is missing; without one a new database is created and migrated as
 * before. It sits in node_modules/.cache, beside the PGlite that made it, named after that
 * PGlite's version and the migrations' code, so that a new PGlite or a changed migration never
 * loads a stale one.
 */

/** How make-embedded-template.ts shapes the dump: a change here never loads one made the old way. */
const TEMPLATE_FORMAT = 'postgres database only';

/** The dump for this PGlite and these migrations (it may not exist yet). */
export function embeddedTemplatePath(): string {
  const pglite = packageDir(require.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(readFileSync(join(pglite, 'package.json'), 'utf8')) as { version: string };
  const hash = createHash('sha256').update(version).update(`\0${TEMPLATE_FORMAT}`);
  for (const migration of MIGRATIONS) hash.update(`\0${migration.name}\0${String(migration.prototype.up)}`);
  return join(dirname(dirname(pglite)), '.cache', 'petstore-gateway', `pglite-${version}-${hash.digest('hex').slice(0, 16)}.tar`);
}

/** The dump, when there is one. */
export function readEmbeddedTemplate(): Blob | undefined {
  const path = embeddedTemplatePath();
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined;
}

/** Keeps `dump` as the template: written whole under another name, then renamed, so no reader sees half. */
export async function writeEmbeddedTemplate(dump: Blob): Promise<string> {
  const path = embeddedTemplatePath();
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()));
  renameSync(partial, path);
  return path;
}

/** The package's own folder: the one holding its package.json, above its entry point. */
function packageDir(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}
