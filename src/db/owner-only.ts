import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Takes group and other permissions off everything under `dir`. PGlite creates its files 0666
 * less the umask (0644 or 0666 under the usual ones), so after it has written them they are made
 * the owner's alone; the directory itself is 0700, so files it adds later cannot be reached by
 * anyone else either.
 */
export function restrictToOwner(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      chmodSync(path, 0o700);
      restrictToOwner(path);
    } else if (entry.isFile()) {
      chmodSync(path, 0o600);
    }
  }
}
