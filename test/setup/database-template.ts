import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { connectDatabase } from '../../src/db/database';
import { embeddedExtensions } from '../../src/db/embedded';
import { adminQuery, testDatabaseName, testDatabasePrefix, withDatabase } from '../helpers/database';

/**
 * Migrating takes a fresh PGlite a few seconds, so the run migrates one template and each test
 * file starts from a copy of it: the data directory of a migrated PGlite, or a PostgreSQL
 * database other databases are created from.
 */

/** Where test files find the template: a PGlite data directory dump (embedded mode). */
export const TEMPLATE_DUMP_ENV = 'PETSTORE_TEST_TEMPLATE_DUMP';
/** Where test files find the template: a database name on DATABASE_URL's server (services mode). */
export const TEMPLATE_DATABASE_ENV = 'PETSTORE_TEST_TEMPLATE_DATABASE';

/** Builds the template; returns the environment variables that tell test files where it is. */
/**
 * PGlite's start parameters with a smaller buffer cache: the 128 MB default is far more than a
 * test file's few rows need, and each worker holds one PGlite at a time.
 */
export const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

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
  const db = await PGlite.create({ startParams: EMBEDDED_START_PARAMS, extensions: await embeddedExtensions() });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 2 });
  await server.start();
  try {
    const dataSource = await connectDatabase(`postgres://postgres@${server.getServerConn()}/postgres`, { embedded: true });
    await dataSource.destroy();
  } finally {
    await server.stop();
  }
  const dump = await db.dumpDataDir('none');
  await db.close();
  const path = join(tmpdir(), `petstore-template-${id}.tar`);
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
  return { [TEMPLATE_DUMP_ENV]: path };
}

export async function dropTemplate(): Promise<void> {
  const dump = process.env[TEMPLATE_DUMP_ENV];
  if (dump) rmSync(dump, { force: true });
  const name = process.env[TEMPLATE_DATABASE_ENV];
  const serverUrl = process.env.DATABASE_URL;
  if (!name || !serverUrl) return;
  const left = await adminQuery<{ datname: string }>(serverUrl, 'SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
    testDatabaseName(name, ''),
  ]);
  for (const { datname } of left) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
