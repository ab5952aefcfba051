import type { EntityManager } from 'typeorm';
import { notifyOnCommit } from '../sql/notify';

export type OrderChangeKind = 'PLACED' | 'COMPLETED' | 'CANCELLED';

/** An order was placed, completed or cancelled; `apiKeyId` says who may hear of it. */
export interface OrderChange {
  type: 'order';
  kind: OrderChangeKind;
  id: string;
  apiKeyId: string;
}

export function announceOrderChange(manager: EntityManager, kind: OrderChangeKind, order: { id: string; apiKeyId: string }): Promise<void> {
  return notifyOnCommit(manager, { type: 'order', kind, id: order.id, apiKeyId: order.apiKeyId } satisfies OrderChange);
}
