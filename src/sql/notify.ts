import type { EntityManager } from 'typeorm';

/** The channel every committed change is announced on (docs/contract.md §9). */
export const CHANGES_CHANNEL = 'petstore_changes';

/**
 * Queues a notification in the caller's transaction. PostgreSQL delivers it only if the
 * transaction commits, in commit order, to every session listening on the channel: every
 * instance sharing the database. Payloads stay small (ids and kinds), far below NOTIFY's 8,000 bytes.
 */
export async function notifyOnCommit(manager: EntityManager, payload: object): Promise<void> {
  await manager.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify(payload)]);
}
