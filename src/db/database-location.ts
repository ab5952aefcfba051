import { resolve } from 'node:path';
import type { Config } from '../config';
import { partsOf } from './connect-failure';
import { IN_MEMORY } from './in-memory';

/** The database in use, for the start-up lines: never a password. */
export function databaseLocation({ databaseUrl, pgliteDataDir }: Pick<Config, 'databaseUrl' | 'pgliteDataDir'>): string {
  if (databaseUrl) {
    const { host, port, database } = partsOf(databaseUrl);
    return `PostgreSQL at ${host}:${port}/${database}`;
  }
  return pgliteDataDir === IN_MEMORY ? `embedded PGlite in memory (${IN_MEMORY})` : `embedded PGlite at ${resolve(pgliteDataDir)}`;
}
