import type { NotificationOf, NotificationShape } from '../sql/notification-shape';

/** A category was created, changed or deleted. Built by the database's `catalogue_change()` (migration ChangeTriggers). */
export const CATEGORY_CHANGE = { type: ['category'], kind: ['CREATED', 'UPDATED', 'DELETED'], id: 'id' } as const satisfies NotificationShape;
export type CategoryChange = NotificationOf<typeof CATEGORY_CHANGE>;
