import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { connectDatabase, type Database, openDatabase } from '../../src/db/database';
import { type EmbeddedPostgres, embeddedExtensions, serveEmbedded, startEmbeddedPostgres } from '../../src/db/embedded';
import { IN_MEMORY } from '../../src/db/in-memory';
import { EMBEDDED_START_PARAMS, TEMPLATE_DATABASE_ENV, TEMPLATE_DUMP_ENV } from '../setup/database-template';
import { giveBackServer, takeIdleServer } from './idle-servers';

export interface TestDatabase extends Database {
  /** The postgres:// URL of this test's own database. */
  url: string;
}

/**
 * A fresh database for one test file: with DATABASE_URL, a new database on that server, dropped
 * afterwards; without it, an in-memory PGlite. Either way, migrated as the gateway migrates: a copy
 * of the run's migrated template when there is one (test/setup), on which migrating finds nothing
 * pending.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dump = process.env[TEMPLATE_DUMP_ENV];
    if (dump) return openEmbeddedCopy(dump);
    const database = await openDatabase({ pgliteDataDir: IN_MEMORY });
    return { ...database, url: dataSourceUrl(database) };
  }
  const template = process.env[TEMPLATE_DATABASE_ENV];
  const name = testDatabaseName(template, randomBytes(4).toString('hex'));
  await adminQuery(serverUrl, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = withDatabase(serverUrl, name);
  const database = await openDatabase({ databaseUrl: url, pgliteDataDir: IN_MEMORY });
  return {
    ...database,
    url,
    async close() {
      await database.close();
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * An in-memory PGlite holding the template's data, served on a loopback socket and reached through
 * `pg`, as src/db/embedded.ts serves the gateway's own: an emptied one this file used before, or a
 * new one loaded from the template's data directory. It is emptied for reuse only if its schema is
 * still the template's: a test that replaced a function or renamed a column leaves it to no other.
 */
async function openEmbeddedCopy(dumpPath: string): Promise<TestDatabase> {
  const embedded = takeIdleServer() ?? (await serveEmbeddedCopy(dumpPath));
  let dataSource: Database['dataSource'];
  try {
    dataSource = await connectDatabase(embedded.url, { embedded: true });
    if (!templateSchema.has(embedded)) templateSchema.set(embedded, await schemaOf(dataSource));
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return {
    dataSource,
    embedded: true,
    url: embedded.url,
    async close() {
      try {
        if ((await schemaOf(dataSource)) !== templateSchema.get(embedded)) throw new Error('schema changed');
        await dataSource.query(EMPTY_AS_THE_TEMPLATE);
      } catch {
        // Whatever the test left it in, a server that cannot be emptied is not reused.
        await dataSource.destroy().catch(() => {});
        await embedded.stop();
        return;
      }
      await dataSource.destroy();
      giveBackServer(embedded);
    },
  };
}

/** Each embedded server's schema as it came from the template (schemaOf). */
const templateSchema = new WeakMap<EmbeddedPostgres, string>();

/**
 * A digest of the public schema: its tables' columns, its functions' sources, its triggers, and
 * the migrations' rows (TypeORM takes the last migration by id).
 */
async function schemaOf(dataSource: Database['dataSource']): Promise<string> {
  const [{ digest }] = await dataSource.query(`
    SELECT md5(string_agg(part, E'\n' ORDER BY part)) AS digest FROM (
      SELECT c.relname || ' ' || c.relkind::text || ' ' || coalesce(string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum), '') AS part
        FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE c.relnamespace = 'public'::regnamespace GROUP BY c.oid, c.relname, c.relkind
      UNION ALL SELECT p.oid::regprocedure::text || ' ' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
      UNION ALL SELECT t.tgname || ' ' || t.tgrelid::regclass::text || ' ' || t.tgfoid::regproc::text FROM pg_trigger t WHERE NOT t.tgisinternal
      UNION ALL SELECT id || ' ' || name FROM migrations
    ) AS parts`);
  return digest as string;
}

/**
 * Back to the template's state: every table but the migrations' that holds a row emptied, the
 * sequences of those tables that were used restarted, and nothing of the one session PGlite serves every connection from
 * (listeners, prepared statements, settings, advisory locks) left for the next test. Most tables
 * of most tests stay empty, and truncating one costs PGlite a new file for it and each of its
 * indexes: checked first, only the ones written are truncated, a tenth of the time.
 */
const EMPTY_AS_THE_TEMPLATE = `
  DO $$
  DECLARE
    name text;
    written text[] := '{}';
    has_rows boolean;
  BEGIN
    FOR name IN SELECT format('%I', tablename) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations' LOOP
      EXECUTE 'SELECT EXISTS (SELECT FROM ' || name || ')' INTO has_rows;
      IF has_rows THEN written := written || name; END IF;
    END LOOP;
    IF cardinality(written) > 0 THEN EXECUTE 'TRUNCATE ' || array_to_string(written, ', ') || ' CASCADE'; END IF;
    -- The sequences of every table but the migrations' (RESTART IDENTITY's), the ones used.
    PERFORM setval(sequence.oid, used.start_value, false)
      FROM pg_sequences used
      JOIN pg_class sequence ON sequence.relname = used.sequencename AND sequence.relnamespace = 'public'::regnamespace
      JOIN pg_depend owner ON owner.objid = sequence.oid AND owner.classid = 'pg_class'::regclass AND owner.deptype IN ('a', 'i')
      WHERE used.schemaname = 'public' AND used.last_value IS NOT NULL AND owner.refobjid <> 'migrations'::regclass;
  END $$;
  UNLISTEN *; DEALLOCATE ALL; RESET ALL; SELECT pg_advisory_unlock_all();
`;

/**
 * A migrated embedded PostgreSQL with no client yet, for a test that connects to it its own way
 * (through a proxy, say): a copy of the run's template when there is one, migrated afresh if not.
 */
export async function startEmbeddedTestPostgres(): Promise<EmbeddedPostgres> {
  const dump = process.env[TEMPLATE_DUMP_ENV];
  return dump ? serveEmbeddedCopy(dump) : startEmbeddedPostgres(IN_MEMORY);
}

async function serveEmbeddedCopy(dumpPath: string): Promise<EmbeddedPostgres> {
  return serveEmbedded(
    await PGlite.create({ loadDataDir: new Blob([readFileSync(dumpPath)]), startParams: EMBEDDED_START_PARAMS, extensions: await embeddedExtensions() }),
  );
}

/**
 * A migrated PGlite data directory on disk, the kind `npm start` keeps in PGLITE_DATA_DIR, for a
 * gateway started as a process: written from the run's template, so that the process starts
 * without creating and migrating a database. Undefined when the run has no embedded template.
 */
export async function migratedDataDir(dir: string): Promise<string | undefined> {
  const dump = process.env[TEMPLATE_DUMP_ENV];
  if (!dump) return undefined;
  const db = await PGlite.create({ dataDir: dir, loadDataDir: new Blob([readFileSync(dump)]), extensions: await embeddedExtensions() });
  await db.close();
  return dir;
}

function dataSourceUrl(database: Database): string {
  return (database.dataSource.options as { url: string }).url;
}

/** The URL of database `name` on the server `serverUrl` points at. */
export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the server's default database: creating or dropping another. */
export async function adminQuery<T extends object = object>(serverUrl: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A test file's database is named after the run's template, so that the run can drop whatever
 * its files left behind (a file killed by a timeout, say) with the template.
 */
export function testDatabaseName(template: string | undefined, suffix: string): string {
  const prefix = testDatabasePrefix();
  return `${prefix}test_${template ? template.replace(`${prefix}template_`, '') : process.pid}_${suffix}`;
}

/**
 * What every database the suite creates on DATABASE_URL's server is named with first:
 * TEST_DATABASE_PREFIX, for a shared server's naming rule; `petstore_` by default. The names go
 * into SQL unquoted, so it is lower-case letters, digits and underscores.
 */
export function testDatabasePrefix(): string {
  const prefix = process.env.TEST_DATABASE_PREFIX ?? 'petstore_';
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) {
    throw new Error(`TEST_DATABASE_PREFIX: expected lower-case letters, digits and underscores, got ${JSON.stringify(prefix)}`);
  }
  return prefix;
}
