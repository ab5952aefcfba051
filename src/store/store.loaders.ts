import DataLoader from 'dataloader';
import { alignByKey } from '../common/loader';
import type { InventoryItem } from './inventory-item.entity';
import type { InventoryService } from './inventory.service';

/** Per-request loaders for stock and orders. */
export function createStoreLoaders(services: { inventory: InventoryService }) {
  return {
    inventoryByPetId: new DataLoader<string, InventoryItem | null>(async (petIds) =>
      alignByKey(petIds, await services.inventory.findByPetIds(petIds), (item) => item.petId),
    ),
  };
}
