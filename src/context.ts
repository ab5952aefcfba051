import type { DataSource } from 'typeorm';
import { ApiKeyService, type KeyCache, keyCache } from './auth/api-key.service';
import type { AuthContext } from './auth/auth.context';
import type { Trace } from './common/trace';
import type { Caller } from './auth/caller';
import type { FieldLimitContext } from './limits/field-limit';
import type { FieldLimiter } from './limits/field-limiter';
import type { Decision, RateLimiter } from './limits/limiter';
import type { LiveContext, LiveServices } from './live/live.context';
import type { Logger } from './logger';
import { CatalogueLoaderSet, type CatalogueLoaders } from './pets/catalogue.loaders';
import { CatalogueSize } from './pets/catalogue-size';
import { CategoryService } from './pets/category.service';
import { PetService } from './pets/pet.service';
import type { PetsContext } from './pets/pets.context';
import { InventoryService } from './store/inventory.service';
import { OrderService, type PurgeClock } from './store/order.service';
import type { OrderScope } from './store/order-scope';
import type { StoreContext } from './store/store.context';
import type { ReadReplicas } from './sql/read-replicas';
import { ReadRoute } from './sql/read-route';
import type { RequestReads } from './sql/read-your-writes';
import { UNKNOWN_POSITION } from './sql/write-positions';
import { Statements, type Budget } from './sql/statements';
import { StoreLoaderSet, type StoreLoaders } from './store/store.loaders';

/** The services every resolver and REST route calls: the app's set, or one request's. */
export interface Services {
  pets: PetService;
  categories: CategoryService;
  inventory: InventoryService;
  orders: OrderService;
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  fieldLimiter: FieldLimiter;
  live: LiveServices;
  /** What each request's services are made of (requestServices). */
  database: ServiceParts;
  /** A request's reads and writes with read replicas configured: where its reads go, what its writes record. */
  reads?: RequestReads;
}

/** The app's database, and the state its services share over all requests. */
export interface ServiceParts {
  statements: Statements;
  /** DATABASE_READ_URLS' replicas, when configured. */
  replicas?: ReadReplicas;
  keyCache: KeyCache;
  purge: PurgeClock;
  /** The number of pets, read a few seconds at a time: what a substring filter's price follows. */
  catalogueSize: CatalogueSize;
}

export function createServices(
  db: DataSource,
  limits: { limiter: RateLimiter; fieldLimiter: FieldLimiter },
  live: LiveServices,
  logger: Logger,
  replicas?: ReadReplicas,
): Services {
  const statements = new Statements(db);
  const catalogueSize = new CatalogueSize(new PetService(statements), logger);
  const database: ServiceParts = { statements, replicas, keyCache: keyCache(), purge: { last: 0 }, catalogueSize };
  return { ...limits, live, database, ...databaseServices(database.statements, database) };
}

/**
 * One request's services: each of their statements taken from its `budget` (docs/contract.md §5),
 * its reads sent where `reads` routes them once it is known to only read.
 */
export function requestServices(shared: Services, budget: Budget, reads?: RequestReads): Services {
  return { ...shared, reads, ...databaseServices(shared.database.statements.within(budget, reads?.route), shared.database) };
}

/**
 * The services that deliver a live event: their reads on a replica that has replayed `position`
 * (the primary's, past the event's commit), else on the primary, as they are without replicas.
 */
export function eventServices(shared: Services, position: bigint | undefined): Services {
  const { replicas } = shared.database;
  if (!replicas) return shared;
  const route = new ReadRoute(replicas);
  route.toReplica(position ?? UNKNOWN_POSITION);
  return { ...shared, ...databaseServices(shared.database.statements.routedBy(route), shared.database) };
}

/** The services over the database, their statements run by `statements`. */
function databaseServices(statements: Statements, shared: ServiceParts) {
  return {
    pets: new PetService(statements),
    categories: new CategoryService(statements),
    inventory: new InventoryService(statements),
    orders: new OrderService(statements, shared.purge),
    // Keys are checked, issued and listed on the primary: a key just made or revoked is so at once.
    apiKeys: new ApiKeyService(statements.onPrimary(), shared.keyCache),
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
  /** The request's trace, when it is traced: the operation's span is its child. */
  trace?: Trace;
}

export function createContext(caller: Caller, services: Services, quota?: Decision, trace?: Trace): Context {
  return new RequestContext(caller, services, quota, trace);
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
    readonly trace?: Trace,
  ) {}

  get loaders(): Loaders {
    this.madeLoaders ??= createLoaders(this.services);
    return this.madeLoaders;
  }
}

/** A fresh set of loaders: per request, or per live event (shared by that event's subscribers). */
export function createLoaders(services: Services): Loaders {
  return new RequestLoaders(services);
}

/** The catalogue's loaders and the store's on one object; each loader is made on first use. */
class RequestLoaders extends CatalogueLoaderSet implements StoreLoaders {
  private readonly store: StoreLoaders;

  constructor(services: Services) {
    super(services);
    this.store = new StoreLoaderSet(services);
  }

  get orderById() {
    return this.store.orderById;
  }

  get inventoryByPetId() {
    return this.store.inventoryByPetId;
  }

  visibleOrderById(scope: OrderScope) {
    return this.store.visibleOrderById(scope);
  }
}
