import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase } from '../../src/db/database';
import { makeEmbeddedTemplate } from '../../src/db/make-embedded-template';
import { adminQuery, testDatabaseName, testDatabasePrefix, withDatabase } from '../helpers/database';

/**
 * Creating and migrating a fresh database takes a PGlite several seconds, so each test file starts
 * from a copy of a migrated template: the dump of a migrated PGlite data directory that a new
 * embedded database starts from (src/db/embedded-template.ts), kept between runs, or a PostgreSQL
 * database made for the run that other databases are created from.
 */

/** Where test files find the template: a PGlite data directory dump (embedded mode), kept after the run. */
export const TEMPLATE_DUMP_ENV = 'PETSTORE_TEST_TEMPLATE_DUMP';
/** Where test files find the template: a database name on DATABASE_URL's server (services mode). */
export const TEMPLATE_DATABASE_ENV = 'PETSTORE_TEST_TEMPLATE_DATABASE';

/**
 * PGlite's start parameters with a smaller buffer cache: the 128 MB default is far more than a
 * test file's few rows need, and each worker holds one PGlite at a time.
 */
export const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/** Builds the template; returns the environment variables that tell test files where it is. */
export async function createTemplate(): Promise<Record<string, string>> {
  const serverUrl = process.env.DATABASE_URL;
  const id = `${process.pid}_${randomBytes(4).toString('hex')}`;
  if (serverUrl) {
    const name = `${testDatabasePrefix()}template_${id}`;
    await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
    const dataSource = await connectDatabase(withDatabase(serverUrl, name), { embedded: false });
    await dataSource.destroy();
    return { [TEMPLATE_DATABASE_ENV]: name };
  }
  // The embedded template `npm ci` made, or made now when the migrations changed since.
  const { path } = await makeEmbeddedTemplate();
  return { [TEMPLATE_DUMP_ENV]: path };
}

export async function dropTemplate(): Promise<void> {
  const name = process.env[TEMPLATE_DATABASE_ENV];
  const serverUrl = process.env.DATABASE_URL;
  if (!name || !serverUrl) return;
  const left = await adminQuery<{ datname: string }>(serverUrl, 'SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
    testDatabaseName(name, ''),
  ]);
  for (const { datname } of left) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
