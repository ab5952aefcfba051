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
    for (const statement of ONLY_THE_GATEWAYS_DATABASE) await db.exec(statement);
    dump = await db.dumpDataDir('none');
  } finally {
    await embedded.stop();
  }
  return { path: await writeEmbeddedTemplate(dump), made: true };
}

/**
 * A PGlite serves one database, `postgres`; initdb's template0 and template1 beside it are two
 * thirds of the dump, and of what loading it costs each new embedded database. Dropped, then
 * checkpointed so that a load replays no WAL. One statement at a time: DROP DATABASE refuses to
 * run in the transaction a multi-statement query is.
 */
const ONLY_THE_GATEWAYS_DATABASE = [
  "UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')",
  'DROP DATABASE template0',
  'DROP DATABASE template1',
  'CHECKPOINT',
];
