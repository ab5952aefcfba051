import { existsSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase } from './database';
import { embeddedExtensions, serveEmbedded } from './embedded';
import { embeddedTemplatePath, writeEmbeddedTemplate } from './embedded-template';

/**
 * Makes the migrated template a new embedded database starts from (embedded-template.ts): a
 * PGlite created from nothing, migrated as the gateway migrates, dumped. Returns its path, and
 * whether it was made now (false: it was there already).
 */
export async function makeEmbeddedTemplate(): Promise<{ path: string; made: boolean }> {
  const path = embeddedTemplatePath();
  if (existsSync(path)) return { path, made: false };
  const db = await PGlite.create({ extensions: await embeddedExtensions() });
  const embedded = await serveEmbedded(db);
  let dump: Blob;
  try {
    const dataSource = await connectDatabase(embedded.url, { embedded: true });
    await dataSource.destroy();
    dump = await db.dumpDataDir('none');
  } finally {
    await embedded.stop();
  }
  return { path: await writeEmbeddedTemplate(dump), made: true };
}
