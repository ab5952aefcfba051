import type { QueryRunner } from 'typeorm';
import type { TestApp } from './app';

/**
 * Holds every use of `table` behind a lock the test takes: requests sent meanwhile stay in flight
 * (waiting on the database) until `release`, however slow the machine. On the embedded database,
 * whose one connection the lock's transaction keeps, every statement waits.
 */
export async function holdTable(t: TestApp, table: string): Promise<{ release: () => Promise<void> }> {
  const runner: QueryRunner = t.db.dataSource.createQueryRunner();
  await runner.startTransaction();
  // The database's own time-outs (the gateway sets them for its sessions) would end the lock early on a slow machine.
  await runner.query('SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0');
  await runner.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  return {
    release: async () => {
      await runner.commitTransaction();
      await runner.release();
    },
  };
}

/** Holds every read of `pets` (holdTable). */
export function holdPets(t: TestApp): Promise<{ release: () => Promise<void> }> {
  return holdTable(t, 'pets');
}
