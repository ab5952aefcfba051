import DataLoader from 'dataloader';
import { alignByKey } from '../common/loader';
import type { InventoryItem } from '../pets/inventory-item.entity';
import type { InventoryService } from './inventory.service';
import type { Order } from './order.entity';
import type { OrderScope } from './order-scope';
import type { OrderService } from './order.service';

export type StoreLoaders = ReturnType<typeof createStoreLoaders>;

/** Per-request loaders for stock and orders. */
export function createStoreLoaders(services: { inventory: InventoryService; orders: OrderService }) {
  const visibleOrders = new Map<string, DataLoader<string, Order | null>>();
  return {
    /** Any order, whoever placed it: callers filter by scope before loading (live events). */
    orderById: new DataLoader<string, Order | null>(async (ids) =>
      alignByKey(ids, await services.orders.findByIds(ids), (order) => order.id),
    ),
    inventoryByPetId: new DataLoader<string, InventoryItem | null>(async (petIds) =>
      alignByKey(petIds, await services.inventory.findByPetIds(petIds), (item) => item.petId),
    ),
    /** Orders the scope may see, by id: aliased `order(id)` fields share one statement. */
    visibleOrderById(scope: OrderScope): DataLoader<string, Order | null> {
      const key = `${scope.apiKeyId}/${scope.admin}`;
      let loader = visibleOrders.get(key);
      if (!loader) {
        loader = new DataLoader(async (ids) => alignByKey(ids, await services.orders.findVisibleByIds(ids, scope), (order) => order.id));
        visibleOrders.set(key, loader);
      }
      return loader;
    },
  };
}
