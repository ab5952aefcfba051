import { PetStatus } from './pet-status';

/**
 * The status of a pet's stock (docs/contract.md §3): units left → AVAILABLE; none left but an open
 * order → PENDING; none left and nothing open → SOLD.
 */
export function stockStatus(quantity: number, hasOpenOrder: boolean): PetStatus {
  if (quantity > 0) return PetStatus.AVAILABLE;
  return hasOpenOrder ? PetStatus.PENDING : PetStatus.SOLD;
}
