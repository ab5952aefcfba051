import type { NotificationOf, NotificationShape } from '../sql/notification-shape';

/**
 * An order was placed, completed or cancelled; `apiKeyId` says who may hear of it. Built by the
 * database's `order_change()` (migration DomainRules), which the orders' triggers call (migration
 * ChangeTriggers).
 */
export const ORDER_CHANGE = {
  type: ['order'],
  kind: ['PLACED', 'COMPLETED', 'CANCELLED'],
  id: 'id',
  apiKeyId: 'id',
} as const satisfies NotificationShape;
export type OrderChange = NotificationOf<typeof ORDER_CHANGE>;
export type OrderChangeKind = OrderChange['kind'];
