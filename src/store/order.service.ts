import { EntityManager, In, QueryFailedError, type Repository, SelectQueryBuilder } from 'typeorm';
import type { Page, PageRequest } from '../common/page';
import { keysetPage } from '../sql/rows';
import type { Statements } from '../sql/statements';
import { ApiError, badInput, notFound } from '../errors';
import { CHANGES_CHANNEL } from '../sql/notify';
import { sqlState } from '../sql/pg-errors';
import { MAX_IDEMPOTENCY_KEY_LENGTH, orderRequestHash, purgeExpiredIdempotencyKeys } from './idempotency';
import { IDEMPOTENCY_TTL_MS } from './idempotency-key.entity';
import { lockStock, settleStock } from './inventory.service';
import { Order } from './order.entity';
import type { OrderScope } from './order-scope';
import type { NewOrderInput } from './store.inputs';

export interface OrderFilter {
  petId?: string | null;
  complete?: boolean | null;
}

const PLACE_ORDER = 'SELECT * FROM place_order($1, $2, $3, $4, $5, $6, $7, $8)';

interface OrderRow {
  id: string;
  pet_id: string;
  quantity: number;
  ship_date: Date | null;
  complete: boolean;
  api_key_id: string;
  created_at: Date;
}

const orderOf = (row: OrderRow): Order =>
  Object.assign(new Order(), {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    shipDate: row.ship_date,
    complete: row.complete,
    apiKeyId: row.api_key_id,
    createdAt: row.created_at,
  });

/** `place_order` refuses by raising (P0001) with the error code as message and the figures as detail. */
function placeRefusal(error: unknown, input: NewOrderInput, idempotencyKey?: string | null): ApiError | undefined {
  if (sqlState(error) !== 'P0001') return undefined;
  const { message, detail } = (error as QueryFailedError & { driverError: { message: string; detail?: string } }).driverError;
  switch (message) {
    case 'NOT_FOUND':
      return notFound(`Pet ${input.petId}`);
    case 'PET_NOT_AVAILABLE':
      return new ApiError('PET_NOT_AVAILABLE', `Pet ${input.petId} is ${String(detail).toUpperCase()}; only an AVAILABLE pet can be ordered`);
    case 'INSUFFICIENT_STOCK':
      return new ApiError('INSUFFICIENT_STOCK', `Pet ${input.petId} has ${detail} in stock; ${input.quantity} requested`);
    case 'IDEMPOTENCY_KEY_REUSED':
      return new ApiError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used with a different order input');
    case 'IDEMPOTENCY_ORDER_CANCELLED':
      return new ApiError('NOT_FOUND', `The order placed with idempotency key ${JSON.stringify(String(idempotencyKey).slice(0, 40))} was cancelled`);
    default:
      return undefined;
  }
}

/** How often one instance sweeps expired idempotency keys. */
const PURGE_EVERY_MS = 10 * 60 * 1000;

/** When this instance last swept expired idempotency keys. */
export interface PurgeClock {
  last: number;
}

export class OrderService {
  /** `purge` is shared by every request's service: one sweep per instance now and then. */
  constructor(
    private readonly db: Statements,
    private readonly purge: PurgeClock = { last: 0 },
  ) {}

  /** The order, if the caller may see it: another client's order looks exactly like an unknown one. */
  /** The orders among `ids` the scope may see: one statement for any number of ids. */
  findVisibleByIds(ids: readonly string[], scope: OrderScope): Promise<Order[]> {
    return this.db.repository(Order, (orders) => visible(orders.createQueryBuilder('order'), scope).andWhere('order.id IN (:...ids)', { ids }).getMany());
  }

  findByIds(ids: readonly string[]): Promise<Order[]> {
    return this.db.repository(Order, (orders) => orders.findBy({ id: In([...ids]) }));
  }

  /** Newest first, a page at a time. */
  list(scope: OrderScope, filter: OrderFilter, page: PageRequest): Promise<Page<Order>> {
    return this.db.repository(Order, (orders) => keysetPage(matching(orders, scope, filter), 'order.id', page, 'DESC'));
  }

  count(scope: OrderScope, filter: OrderFilter): Promise<number> {
    return this.db.repository(Order, (orders) => matching(orders, scope, filter).getCount());
  }

  /** Newest first, by offset (the REST listing), with the total that matches. */
  async slice(scope: OrderScope, filter: OrderFilter, { limit, offset }: { limit: number; offset: number }) {
    const [orders, total] = await this.db.repository(Order, (repository) =>
      matching(repository, scope, filter).orderBy('order.id', 'DESC').limit(limit).offset(offset).getManyAndCount(),
    );
    return { orders, total };
  }

  /**
   * Takes `quantity` units from the pet's stock and opens an order, in one statement under the
   * stock row's lock (the `place_order` function of the migrations): the stock never goes below
   * zero, whatever the concurrency. Checks, in order: the pet exists, it is AVAILABLE, the stock
   * covers the quantity. With an idempotency key, the same key and input replay the first order.
   */
  async place(scope: OrderScope, input: NewOrderInput, idempotencyKey?: string | null): Promise<Order> {
    if (idempotencyKey != null && (idempotencyKey.length < 1 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      throw badInput(`idempotencyKey must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
    }
    let rows: OrderRow[];
    try {
      rows = await this.db.query<OrderRow[]>(PLACE_ORDER, [
        scope.apiKeyId,
        input.petId,
        input.quantity,
        input.shipDate ?? null,
        idempotencyKey ?? null,
        idempotencyKey != null ? orderRequestHash(input) : null,
        IDEMPOTENCY_TTL_MS,
        // place_order's channel, unused since its writes' triggers announce them (migration ChangeTriggers).
        CHANGES_CHANNEL,
      ]);
    } catch (error) {
      throw placeRefusal(error, input, idempotencyKey) ?? error;
    }
    if (idempotencyKey != null) await this.purgeNowAndThen();
    return orderOf(rows[0]);
  }

  /** Open → complete (admin). The pet's stock status is re-derived in the same transaction. */
  complete(id: string): Promise<Order> {
    return this.db.transaction(async (manager) => {
      const order = await this.lockOrder(manager, id, null);
      order.complete = true;
      await manager.update(Order, { id }, { complete: true });
      const stock = await lockStock(manager, order.petId);
      if (stock) await settleStock(manager, order.petId, stock.quantity);
      return order;
    });
  }

  /** Removes an open order and returns its units to stock (the order's owner, or an admin). */
  cancel(id: string, scope: OrderScope): Promise<string> {
    return this.db.transaction(async (manager) => {
      const order = await this.lockOrder(manager, id, scope);
      await manager.delete(Order, { id });
      const stock = await lockStock(manager, order.petId);
      if (stock) await settleStock(manager, order.petId, stock.quantity + order.quantity);
      return id;
    });
  }

  /** Locks an open order the caller may touch; refuses a completed one. */
  private async lockOrder(manager: EntityManager, id: string, scope: OrderScope | null): Promise<Order> {
    const query = manager.getRepository(Order).createQueryBuilder('order').setLock('pessimistic_write').where('order.id = :id', { id });
    if (scope && !scope.admin) query.andWhere('order.api_key_id = :apiKeyId', { apiKeyId: scope.apiKeyId });
    const order = await query.getOne();
    if (!order) throw notFound(`Order ${id}`);
    if (order.complete) throw new ApiError('ORDER_ALREADY_COMPLETE', `Order ${id} is already complete`);
    return order;
  }

  private async purgeNowAndThen(): Promise<void> {
    if (Date.now() - this.purge.last < PURGE_EVERY_MS) return;
    this.purge.last = Date.now();
    await this.db.manager(purgeExpiredIdempotencyKeys);
  }
}

function visible(query: SelectQueryBuilder<Order>, scope: OrderScope): SelectQueryBuilder<Order> {
  return scope.admin ? query : query.andWhere('order.api_key_id = :apiKeyId', { apiKeyId: scope.apiKeyId });
}

function matching(orders: Repository<Order>, scope: OrderScope, filter: OrderFilter): SelectQueryBuilder<Order> {
  const query = visible(orders.createQueryBuilder('order'), scope);
  if (filter.petId) query.andWhere('order.pet_id = :petId', { petId: filter.petId });
  if (filter.complete != null) query.andWhere('order.complete = :complete', { complete: filter.complete });
  return query;
}
