import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export const IN_MEMORY = 'memory://';

export interface EmbeddedPostgres {
  /** A postgres:// URL on loopback; PGlite runs one session, so connect with a pool of one. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves PGlite on a loopback socket so that TypeORM reaches it through `pg`, exactly as it
 * reaches a real PostgreSQL: one code path, and transactions serialised by the single session.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  if (dataDir !== IN_MEMORY) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir === IN_MEMORY ? undefined : dataDir);
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
