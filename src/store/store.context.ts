import type { Caller } from '../auth/caller';
import type { CatalogueLoaders } from '../pets/catalogue.loaders';
import type { InventoryService } from './inventory.service';
import type { OrderService } from './order.service';
import type { StoreLoaders } from './store.loaders';

/** What the stock and order resolvers use of the per-request context (context.ts builds it). */
export interface StoreContext {
  caller: Caller;
  services: { inventory: InventoryService; orders: OrderService };
  loaders: StoreLoaders & Pick<CatalogueLoaders, 'petById'>;
}
