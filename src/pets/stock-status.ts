import type { EntityManager } from 'typeorm';

/*
 * A stock row's status is derived by one rule (docs/contract.md §3): units left → AVAILABLE; none
 * left but an open order for the pet → PENDING; none left and nothing open → SOLD. The rule lives
 * in the database, as `stock_status(quantity, has_open_order)` (migration DomainRules), because
 * `place_order` must apply it inside PostgreSQL to stay one statement; every other write asks the
 * same function and reads back what it derived, so there is no twin to keep in step.
 */

/** Inserts a pet's stock row, in the transaction that creates the pet: it has no orders yet. */
export async function insertStock(manager: EntityManager, petId: string, quantity: number): Promise<void> {
  await manager.query('INSERT INTO inventory_items (pet_id, quantity, status) VALUES ($1, $2, stock_status($2, false))', [petId, quantity]);
}
