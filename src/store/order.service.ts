import { DataSource, EntityManager, In, SelectQueryBuilder } from 'typeorm';
import type { Page, PageRequest } from '../common/page';
import { keysetPage } from '../db/rows';
import { ApiError, badInput, notFound } from '../errors';
import { PetStatus } from '../pets/pet-status';
import {
  claimIdempotencyKey,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  orderRequestHash,
  purgeExpiredIdempotencyKeys,
  recordIdempotentOrder,
} from './idempotency';
import { lockStock, settleStock } from './inventory.service';
import { Order } from './order.entity';
import type { OrderScope } from './order-scope';
import type { NewOrderInput } from './store.inputs';

export interface OrderFilter {
  petId?: string | null;
  complete?: boolean | null;
}

/** How often one instance sweeps expired idempotency keys. */
const PURGE_EVERY_MS = 10 * 60 * 1000;

export class OrderService {
  private lastPurge = 0;

  constructor(private readonly db: DataSource) {}

  private get orders() {
    return this.db.getRepository(Order);
  }

  /** The order, if the caller may see it: another client's order looks exactly like an unknown one. */
  findVisible(id: string, scope: OrderScope): Promise<Order | null> {
    return this.visible(this.orders.createQueryBuilder('order'), scope).andWhere('order.id = :id', { id }).getOne();
  }

  findByIds(ids: readonly string[]): Promise<Order[]> {
    return this.orders.findBy({ id: In([...ids]) });
  }

  /** Newest first, a page at a time. */
  list(scope: OrderScope, filter: OrderFilter, page: PageRequest): Promise<Page<Order>> {
    return keysetPage(this.matching(scope, filter), 'order.id', page, 'DESC');
  }

  count(scope: OrderScope, filter: OrderFilter): Promise<number> {
    return this.matching(scope, filter).getCount();
  }

  /** Newest first, by offset (the REST listing), with the total that matches. */
  async slice(scope: OrderScope, filter: OrderFilter, { limit, offset }: { limit: number; offset: number }) {
    const [orders, total] = await this.matching(scope, filter).orderBy('order.id', 'DESC').limit(limit).offset(offset).getManyAndCount();
    return { orders, total };
  }

  /**
   * Takes `quantity` units from the pet's stock and opens an order, in one transaction under the
   * stock row's lock: the stock never goes below zero, whatever the concurrency. Checks, in order:
   * the pet exists, it is AVAILABLE, the stock covers the quantity.
   */
  async place(scope: OrderScope, input: NewOrderInput, idempotencyKey?: string | null): Promise<Order> {
    if (idempotencyKey != null && (idempotencyKey.length < 1 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      throw badInput(`idempotencyKey must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
    }
    const order = await this.db.transaction(async (manager) => {
      if (idempotencyKey != null) {
        const claim = await claimIdempotencyKey(manager, scope.apiKeyId, idempotencyKey, orderRequestHash(input));
        if (claim.kind === 'replay') return this.replay(manager, claim.orderId, idempotencyKey);
      }
      const stock = await lockStock(manager, input.petId);
      if (!stock) throw notFound(`Pet ${input.petId}`);
      if (stock.petStatus !== PetStatus.AVAILABLE) {
        throw new ApiError('PET_NOT_AVAILABLE', `Pet ${input.petId} is ${stock.petStatus.toUpperCase()}; only an AVAILABLE pet can be ordered`);
      }
      if (stock.quantity < input.quantity) {
        throw new ApiError('INSUFFICIENT_STOCK', `Pet ${input.petId} has ${stock.quantity} in stock; ${input.quantity} requested`);
      }
      await settleStock(manager, input.petId, stock.quantity - input.quantity, true);
      const placed = await manager.save(
        manager.create(Order, {
          petId: input.petId,
          quantity: input.quantity,
          shipDate: input.shipDate ?? null,
          complete: false,
          apiKeyId: scope.apiKeyId,
        }),
      );
      if (idempotencyKey != null) await recordIdempotentOrder(manager, scope.apiKeyId, idempotencyKey, placed.id);
      return placed;
    });
    if (idempotencyKey != null) await this.purgeNowAndThen();
    return order;
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

  private async replay(manager: EntityManager, orderId: string | null, key: string): Promise<Order> {
    const order = orderId ? await manager.findOneBy(Order, { id: orderId }) : null;
    if (!order) {
      throw new ApiError('NOT_FOUND', `The order placed with idempotency key ${JSON.stringify(key.slice(0, 40))} was cancelled`);
    }
    return order;
  }

  private async purgeNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await purgeExpiredIdempotencyKeys(this.db.manager);
  }

  private visible(query: SelectQueryBuilder<Order>, scope: OrderScope): SelectQueryBuilder<Order> {
    return scope.admin ? query : query.andWhere('order.api_key_id = :apiKeyId', { apiKeyId: scope.apiKeyId });
  }

  private matching(scope: OrderScope, filter: OrderFilter): SelectQueryBuilder<Order> {
    const query = this.visible(this.orders.createQueryBuilder('order'), scope);
    if (filter.petId) query.andWhere('order.pet_id = :petId', { petId: filter.petId });
    if (filter.complete != null) query.andWhere('order.complete = :complete', { complete: filter.complete });
    return query;
  }
}
