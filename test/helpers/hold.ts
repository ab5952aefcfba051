import type { QueryRunner } from 'typeorm';
import type { TestApp } from './app';

/**
 * Holds every read of `pets` behind a lock the test takes: requests sent meanwhile stay in flight
 * (waiting on the database) until `release`, however slow the machine.
 */
export async function holdPets(t: TestApp): Promise<{ release: () => Promise<void> }> {
  const runner: QueryRunner = t.db.dataSource.createQueryRunner();
  await runner.startTransaction();
  await runner.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
  return {
    release: async () => {
      await runner.commitTransaction();
      await runner.release();
    },
  };
}
