import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey } from '../auth/key-secret';
import { IN_MEMORY } from './in-memory';

/** Where the embedded database's admin key is kept, inside its data directory. */
export const ADMIN_KEY_FILE = 'admin-api-key';

/**
 * The admin key of an embedded database when ADMIN_API_KEY is unset: one per data directory, made
 * on its first start and kept beside the data (owner-only), so a restart does not turn the key a
 * second terminal holds into a 401. An in-memory database gets a fresh one each time.
 */
export function embeddedAdminKey(dataDir: string): { key: string; file?: string } {
  if (dataDir === IN_MEMORY) return { key: generateApiKey() };
  const file = join(dataDir, ADMIN_KEY_FILE);
  const kept = readKey(file);
  if (kept) return { key: kept, file };
  try {
    writeFileSync(file, `${generateApiKey()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process on the same directory wrote it first: its key is the one.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { key: readKey(file) as string, file };
}

function readKey(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
