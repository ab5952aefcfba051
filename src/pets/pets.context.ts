import type DataLoader from 'dataloader';
import type { CatalogueLoaders } from './catalogue.loaders';
import type { CategoryService } from './category.service';
import type { InventoryItem } from './inventory-item.entity';
import type { PetService } from './pet.service';

/** What the catalogue's resolvers use of the per-request context (context.ts builds it). */
export interface PetsContext {
  services: { pets: PetService; categories: CategoryService };
  loaders: CatalogueLoaders & {
    /** A pet's stock row, for `Pet.inventory` when the pet's read did not join it in. */
    inventoryByPetId: DataLoader<string, InventoryItem | null>;
  };
}
