import type { EntityManager } from 'typeorm';
import { notifyOnCommit } from '../sql/notify';
import type { PetStatus } from './pet-status';

export type PetChangeKind = 'CREATED' | 'UPDATED' | 'DELETED';

/** A pet was created, changed or deleted. */
export interface PetChange {
  type: 'pet';
  kind: PetChangeKind;
  id: string;
}

/**
 * A pet's stock row as the committing transaction left it. It travels with the event (a few
 * bytes) so that every subscriber sees each commit's quantity in commit order, however late it
 * is delivered.
 */
export interface StockChange {
  type: 'stock';
  petId: string;
  quantity: number;
  status: PetStatus;
}

export function announcePetChange(manager: EntityManager, kind: PetChangeKind, id: string): Promise<void> {
  return notifyOnCommit(manager, { type: 'pet', kind, id } satisfies PetChange);
}

export function announceStockChange(manager: EntityManager, { petId, quantity, status }: Omit<StockChange, 'type'>): Promise<void> {
  return notifyOnCommit(manager, { type: 'stock', petId, quantity, status } satisfies StockChange);
}
