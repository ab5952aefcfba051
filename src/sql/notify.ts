/**
 * The channel every committed change is announced on (docs/contract.md §9), by the tables' own
 * triggers (migration ChangeTriggers, which names it in SQL): PostgreSQL delivers a notification
 * only if its transaction commits, in commit order, to every session listening on the channel.
 */
export const CHANGES_CHANNEL = 'petstore_changes';
