import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDir } from './data-dir-lock';
import { readEmbeddedTemplate } from './embedded-template';
import { IN_MEMORY } from './in-memory';
import { restrictToOwner } from './owner-only';

/**
 * The extensions the migrations create (pg_trgm: the pet-name search index), for every PGlite to
 * load. An ES module only, imported as PGlite imports its own parts.
 */
export async function embeddedExtensions() {
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  return { pg_trgm };
}

export interface EmbeddedPostgres {
  /** A postgres:// URL on loopback; PGlite runs one session, so connect with a pool of one. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves PGlite on a loopback socket so that TypeORM reaches it through `pg`, exactly as it
 * reaches a real PostgreSQL: one code path, and transactions serialised by the single session.
 * A directory is this process's alone while it runs (data-dir-lock.ts), and its owner's alone
 * on disk (owner-only.ts).
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  if (dataDir === IN_MEMORY) {
    return serveEmbedded(await PGlite.create({ loadDataDir: readEmbeddedTemplate(), extensions: await embeddedExtensions() }));
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const lock = lockDataDir(dataDir);
  try {
    // A new database starts as a copy of the migrated template, when there is one (embedded-template.ts).
    const loadDataDir = existsSync(join(dataDir, 'PG_VERSION')) ? undefined : readEmbeddedTemplate();
    const served = await serveEmbedded(await PGlite.create({ dataDir, loadDataDir, extensions: await embeddedExtensions() }));
    restrictToOwner(dataDir);
    return {
      url: served.url,
      async stop() {
        try {
          await served.stop();
          restrictToOwner(dataDir);
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** Serves a PGlite on a loopback port for `pg` to reach; stopping it closes the database too. */
export async function serveEmbedded(db: PGlite): Promise<EmbeddedPostgres> {
  // The pool holds one connection; a second slot only bridges the moment a dropped connection's
  // socket is still being released while its replacement connects.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 2 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
