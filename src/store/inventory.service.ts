import { EntityManager, In, type Repository } from 'typeorm';
import type { Page, PageRequest } from '../common/page';
import { keysetPage } from '../sql/rows';
import type { Statements } from '../sql/statements';
import { notFound } from '../errors';
import { PetStatus } from '../pets/pet-status';
import { InventoryItem } from '../pets/inventory-item.entity';

export interface InventoryFilter {
  status?: PetStatus | null;
}

export class InventoryService {
  constructor(private readonly db: Statements) {}

  findByPetIds(petIds: readonly string[]): Promise<InventoryItem[]> {
    return this.db.repository(InventoryItem, (items) => items.findBy({ petId: In([...petIds]) }));
  }

  list(filter: InventoryFilter, page: PageRequest): Promise<Page<InventoryItem>> {
    return this.db.repository(InventoryItem, (items) => keysetPage(matching(items, filter), 'item.pet_id', page));
  }

  /** From the counters the database keeps by stock status (migration CatalogueCounts), not by counting rows. */
  async count(filter: InventoryFilter): Promise<number> {
    const [{ total }] = await this.db.query<{ total: number }[]>(
      `SELECT coalesce(sum(total), 0)::int AS total FROM stock_counts${filter.status ? ' WHERE status = $1' : ''}`,
      filter.status ? [filter.status] : [],
    );
    return total;
  }

  /** Sets a pet's stock count and re-derives its status, under the stock row's lock. */
  update(petId: string, quantity: number): Promise<InventoryItem> {
    return this.db.transaction(async (manager) => {
      const stock = await lockStock(manager, petId);
      if (!stock) throw notFound(`Pet ${petId}`);
      return settleStock(manager, petId, quantity);
    });
  }
}

function matching(items: Repository<InventoryItem>, filter: InventoryFilter) {
  const query = items.createQueryBuilder('item');
  if (filter.status) query.where('item.status = :status', { status: filter.status });
  return query;
}

export interface LockedStock {
  quantity: number;
  petStatus: PetStatus;
}

/**
 * Locks a pet's stock row until the transaction ends. Every change to stock or to a pet's open
 * orders takes this lock first, so the derived status is always computed from settled figures.
 */
export async function lockStock(manager: EntityManager, petId: string): Promise<LockedStock | null> {
  const rows: { quantity: number; pet_status: PetStatus }[] = await manager.query(
    `SELECT i.quantity, p.status AS pet_status
       FROM inventory_items i JOIN pets p ON p.id = i.pet_id
      WHERE i.pet_id = $1
        FOR UPDATE OF i`,
    [petId],
  );
  return rows[0] ? { quantity: rows[0].quantity, petStatus: rows[0].pet_status } : null;
}

/**
 * Writes a locked stock row's new quantity with the status the database's `stock_status()` derives
 * from it and the pet's open orders (docs/contract.md §3). The row's trigger announces it on commit,
 * if it changed.
 */
export async function settleStock(manager: EntityManager, petId: string, quantity: number): Promise<InventoryItem> {
  const [row]: { status: PetStatus }[] = await manager.query(
    // A data-modifying WITH, so that the statement answers rows, as a SELECT does.
    `WITH settled AS (
       UPDATE inventory_items
          SET quantity = $2, status = stock_status($2, EXISTS (SELECT 1 FROM orders WHERE pet_id = $1 AND NOT complete))
        WHERE pet_id = $1
       RETURNING status
     )
     SELECT status FROM settled`,
    [petId, quantity],
  );
  return Object.assign(new InventoryItem(), { petId, quantity, status: row.status });
}
