import type { NotificationOf, NotificationShape } from '../sql/notification-shape';
import { PetStatus } from './pet-status';

/** A pet was created, changed or deleted. Built by the database's `catalogue_change()` (migration ChangeTriggers). */
export const PET_CHANGE = { type: ['pet'], kind: ['CREATED', 'UPDATED', 'DELETED'], id: 'id' } as const satisfies NotificationShape;
export type PetChange = NotificationOf<typeof PET_CHANGE>;
export type PetChangeKind = PetChange['kind'];

/**
 * A pet's stock row as the committing transaction left it. It travels with the event (a few
 * bytes) so that every subscriber sees each commit's quantity in commit order, however late it
 * is delivered. Built by the database's `stock_change()` (migration DomainRules), which the stock
 * row's triggers call on every write (migration ChangeTriggers).
 */
export const STOCK_CHANGE = {
  type: ['stock'],
  petId: 'id',
  quantity: 'count',
  status: Object.values(PetStatus),
} as const satisfies NotificationShape;
export type StockChange = NotificationOf<typeof STOCK_CHANGE>;
