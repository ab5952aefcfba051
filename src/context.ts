import type { DataSource } from 'typeorm';
import { ApiKeyService } from './auth/api-key.service';
import type { Caller } from './auth/caller';
import type { FieldLimiter } from './limits/field-limiter';
import type { Decision, RateLimiter } from './limits/limiter';
import { createCatalogueLoaders } from './pets/catalogue.loaders';
import { CategoryService } from './pets/category.service';
import { PetService } from './pets/pet.service';
import { InventoryService } from './store/inventory.service';
import { OrderService } from './store/order.service';
import { createStoreLoaders } from './store/store.loaders';

/** The services every resolver and REST route calls; one set per app. */
export interface Services {
  pets: PetService;
  categories: CategoryService;
  inventory: InventoryService;
  orders: OrderService;
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  fieldLimiter: FieldLimiter;
}

export function createServices(db: DataSource, limits: { limiter: RateLimiter; fieldLimiter: FieldLimiter }): Services {
  return {
    ...limits,
    pets: new PetService(db),
    categories: new CategoryService(db),
    inventory: new InventoryService(db),
    orders: new OrderService(db),
    apiKeys: new ApiKeyService(db),
  };
}

export type Loaders = ReturnType<typeof createCatalogueLoaders> & ReturnType<typeof createStoreLoaders>;

/** What one GraphQL request sees: its caller, the services, and loaders no other request shares. */
export interface Context {
  caller: Caller;
  services: Services;
  loaders: Loaders;
  /** The limiter's decision on this request, when it went through the limiter. */
  quota?: Decision;
}

export function createContext(caller: Caller, services: Services, quota?: Decision): Context {
  let loaders: Loaders | undefined;
  return {
    caller,
    services,
    quota,
    // Made on first use: most requests resolve no relation through a loader.
    get loaders() {
      loaders ??= { ...createCatalogueLoaders(services), ...createStoreLoaders(services) };
      return loaders;
    },
  };
}
