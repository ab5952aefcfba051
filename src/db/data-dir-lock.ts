import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file inside a data directory: the pid of the process that holds it. */
export const LOCK_FILE = 'gateway.pid';

/**
 * Another live process holds the data directory. PGlite is one process's database: two of them on
 * one directory each keep their own copy in memory, and whichever writes last wins, so the other's
 * writes are lost. The message is one line naming the holder and what to do.
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `PGLITE_DATA_DIR: ${dataDir} is in use by another process (pid ${holderPid}); ` +
        'stop it first, or set PGLITE_DATA_DIR to another directory (memory:// for a throwaway database).',
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  /** Removes the lock file, if it is still this process's. */
  release(): void;
}

/**
 * Takes `dataDir` for this process: creates its lock file exclusively (O_EXCL), holding the pid.
 * A lock file whose process is gone (a gateway killed, a machine restarted) is stale and taken
 * over; one whose process lives refuses with DataDirInUseError.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return { release: () => releaseIfOurs(file) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) throw new DataDirInUseError(dataDir, holder);
    // Stale, or half-written by a process that died at that moment: take it over, once.
    if (attempt > 0) throw new DataDirInUseError(dataDir, holder ?? 0);
    rmSync(file, { force: true });
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks that a process exists without touching it; EPERM: it exists, as another user's. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseIfOurs(file: string): void {
  if (holderOf(file) === process.pid) rmSync(file, { force: true });
}
