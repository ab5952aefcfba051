import type { EntityManager } from 'typeorm';
import { bindTo } from './rows';

/** The channel every committed change is announced on (docs/contract.md §9). */
export const CHANGES_CHANNEL = 'petstore_changes';

/**
 * Queues a notification in the caller's transaction. PostgreSQL delivers it only if the
 * transaction commits, in commit order, to every session listening on the channel: every
 * instance sharing the database. Payloads stay small (ids and kinds), far below NOTIFY's 8,000 bytes.
 */
export async function notifyOnCommit(manager: EntityManager, payload: object): Promise<void> {
  const values: unknown[] = [];
  await manager.query(`SELECT ${notifyCall(payload, bindTo(values))}`, values);
}

/** `pg_notify` of `payload` on the changes channel, for a statement that announces its own change; `bind` places the parameters. */
export function notifyCall(payload: object, bind: (value: unknown) => string): string {
  return `pg_notify(${bind(CHANGES_CHANNEL)}, ${bind(JSON.stringify(payload))})`;
}
