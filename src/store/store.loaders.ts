import DataLoader from 'dataloader';
import { alignByKey } from '../common/loader';
import type { InventoryItem } from '../pets/inventory-item.entity';
import type { InventoryService } from './inventory.service';
import type { Order } from './order.entity';
import type { OrderScope } from './order-scope';
import type { OrderService } from './order.service';

/** The store's loaders as their users see them (a class's private state left out of its type). */
export type StoreLoaders = Pick<StoreLoaderSet, keyof StoreLoaderSet>;

/** Per-request loaders for stock and orders, each made on first use. */
export class StoreLoaderSet {
  private madeOrderById?: DataLoader<string, Order | null>;
  private madeInventoryByPetId?: DataLoader<string, InventoryItem | null>;
  private visibleOrders?: Map<string, DataLoader<string, Order | null>>;

  constructor(private readonly services: { inventory: InventoryService; orders: OrderService }) {}

  /** Any order, whoever placed it: callers filter by scope before loading (live events). */
  get orderById(): DataLoader<string, Order | null> {
    const { orders } = this.services;
    return (this.madeOrderById ??= new DataLoader<string, Order | null>(async (ids) => alignByKey(ids, await orders.findByIds(ids), (order) => order.id)));
  }

  get inventoryByPetId(): DataLoader<string, InventoryItem | null> {
    const { inventory } = this.services;
    return (this.madeInventoryByPetId ??= new DataLoader<string, InventoryItem | null>(async (petIds) =>
      alignByKey(petIds, await inventory.findByPetIds(petIds), (item) => item.petId),
    ));
  }

  /** Orders the scope may see, by id: aliased `order(id)` fields share one statement. */
  visibleOrderById(scope: OrderScope): DataLoader<string, Order | null> {
    const key = `${scope.apiKeyId}/${scope.admin}`;
    this.visibleOrders ??= new Map();
    let loader = this.visibleOrders.get(key);
    if (!loader) {
      const { orders } = this.services;
      loader = new DataLoader(async (ids) => alignByKey(ids, await orders.findVisibleByIds(ids, scope), (order) => order.id));
      this.visibleOrders.set(key, loader);
    }
    return loader;
  }
}
