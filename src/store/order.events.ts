import type { EntityManager } from 'typeorm';
import type { NotificationOf, NotificationShape } from '../sql/notification-shape';
import { CHANGES_CHANNEL } from '../sql/notify';

/**
 * An order was placed, completed or cancelled; `apiKeyId` says who may hear of it. Built by the
 * database's `order_change()` (migration DomainRules), which `place_order` uses too.
 */
export const ORDER_CHANGE = {
  type: ['order'],
  kind: ['PLACED', 'COMPLETED', 'CANCELLED'],
  id: 'id',
  apiKeyId: 'id',
} as const satisfies NotificationShape;
export type OrderChange = NotificationOf<typeof ORDER_CHANGE>;
export type OrderChangeKind = OrderChange['kind'];

/** Announces the change when the manager's transaction commits (sql/notify.ts). */
export async function announceOrderChange(manager: EntityManager, kind: OrderChangeKind, order: { id: string; apiKeyId: string }): Promise<void> {
  await manager.query('SELECT pg_notify($1, order_change($2, $3, $4))', [CHANGES_CHANNEL, kind, order.id, order.apiKeyId]);
}
