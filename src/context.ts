import type { DataSource } from 'typeorm';
import { ApiKeyService } from './auth/api-key.service';
import type { AuthContext } from './auth/auth.context';
import type { Caller } from './auth/caller';
import type { FieldLimitContext } from './limits/field-limit';
import type { FieldLimiter } from './limits/field-limiter';
import type { Decision, RateLimiter } from './limits/limiter';
import type { LiveContext, LiveServices } from './live/live.context';
import { type CatalogueLoaders, createCatalogueLoaders } from './pets/catalogue.loaders';
import { CategoryService } from './pets/category.service';
import { PetService } from './pets/pet.service';
import type { PetsContext } from './pets/pets.context';
import { InventoryService } from './store/inventory.service';
import { OrderService } from './store/order.service';
import type { StoreContext } from './store/store.context';
import { createStoreLoaders, type StoreLoaders } from './store/store.loaders';

/** The services every resolver and REST route calls; one set per app. */
export interface Services {
  pets: PetService;
  categories: CategoryService;
  inventory: InventoryService;
  orders: OrderService;
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  fieldLimiter: FieldLimiter;
  live: LiveServices;
}

export function createServices(
  db: DataSource,
  limits: { limiter: RateLimiter; fieldLimiter: FieldLimiter },
  live: LiveServices,
): Services {
  return {
    ...limits,
    live,
    pets: new PetService(db),
    categories: new CategoryService(db),
    inventory: new InventoryService(db),
    orders: new OrderService(db),
    apiKeys: new ApiKeyService(db),
  };
}

/** The same services, their statements going through `db`: one request's view of the data source. */
export function servicesOver(services: Services, db: DataSource): Services {
  return {
    ...services,
    pets: services.pets.over(db),
    categories: services.categories.over(db),
    inventory: services.inventory.over(db),
    orders: services.orders.over(db),
    apiKeys: services.apiKeys.over(db),
  };
}

export type Loaders = CatalogueLoaders & StoreLoaders;

/**
 * What one GraphQL request sees: its caller, the services, and loaders no other request shares.
 * Each part declares what its resolvers use; extending them all checks that this one object
 * serves every resolver.
 */
export interface Context extends PetsContext, StoreContext, AuthContext, FieldLimitContext, LiveContext {
  caller: Caller;
  services: Services;
  loaders: Loaders;
  /** The limiter's decision on this request, when it went through the limiter. */
  quota?: Decision;
}

export function createContext(caller: Caller, services: Services, quota?: Decision): Context {
  return new RequestContext(caller, services, quota);
}

/**
 * The loaders are made on first use: most requests resolve no relation through one. The getter
 * lives on the prototype because Apollo Server copies the context's own properties into a fresh
 * object of the same prototype for each operation, which would call an own getter at once
 * (test/graphql/context.cases.ts pins that copy).
 */
class RequestContext implements Context {
  private madeLoaders?: Loaders = undefined;

  constructor(
    readonly caller: Caller,
    readonly services: Services,
    readonly quota?: Decision,
  ) {}

  get loaders(): Loaders {
    this.madeLoaders ??= createLoaders(this.services);
    return this.madeLoaders;
  }
}

/** A fresh set of loaders: per request, or per live event (shared by that event's subscribers). */
export function createLoaders(services: Services): Loaders {
  return { ...createCatalogueLoaders(services), ...createStoreLoaders(services) };
}
