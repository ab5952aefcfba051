import { DataSource, EntityManager, In } from 'typeorm';
import { PetStatus } from '../pets/pet-status';
import { InventoryItem } from './inventory-item.entity';

export class InventoryService {
  constructor(private readonly db: DataSource) {}

  findByPetIds(petIds: readonly string[]): Promise<InventoryItem[]> {
    return this.db.getRepository(InventoryItem).findBy({ petId: In([...petIds]) });
  }
}

/** Every pet gets its stock in the transaction that creates it: zero units, hence SOLD. */
export async function openStock(manager: EntityManager, petId: string): Promise<void> {
  await manager.insert(InventoryItem, { petId, quantity: 0, status: PetStatus.SOLD });
}
