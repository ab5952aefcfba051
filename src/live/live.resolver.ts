import { Arg, Ctx, Directive, Field, FieldResolver, Int, ObjectType, Resolver, Root, Subscription, registerEnumType } from 'type-graphql';
import type { SubscribeResolverData } from 'type-graphql';
import { subscriptionCapOf } from '../auth/plans';
import { RateLimit } from '../auth/rate-limit.resolver';
import { Int64ID } from '../common/id.scalar';
import { badInput } from '../errors';
import { identityOf } from '../limits/identity';
import { InventoryItem } from '../pets/inventory-item.entity';
import { Pet } from '../pets/pet.entity';
import type { PetChange, PetChangeKind, StockChange } from '../pets/pet.events';
import { Order } from '../store/order.entity';
import type { OrderChange, OrderChangeKind } from '../store/order.events';
import { orderScopeOf } from '../store/order-scope';
import type { LiveContext as Context } from './live.context';

/** Most ids one subscription may filter on. */
export const MAX_FILTER_IDS = 100;

export enum PetEventKind {
  CREATED = 'CREATED',
  UPDATED = 'UPDATED',
  DELETED = 'DELETED',
}

export enum OrderEventKind {
  PLACED = 'PLACED',
  COMPLETED = 'COMPLETED',
  CANCELLED = 'CANCELLED',
}

registerEnumType(PetEventKind, {
  name: 'PetEventKind',
  description: 'What happened to a pet.',
  valuesConfig: {
    CREATED: { description: 'The pet was added to the catalogue.' },
    UPDATED: { description: 'The pet was changed.' },
    DELETED: { description: 'The pet was removed from the catalogue.' },
  },
});

registerEnumType(OrderEventKind, {
  name: 'OrderEventKind',
  description: 'What happened to an order.',
  valuesConfig: {
    PLACED: { description: 'The order was placed.' },
    COMPLETED: { description: 'The order was fulfilled.' },
    CANCELLED: { description: 'The order was cancelled and removed; its units went back to stock.' },
  },
});

@ObjectType({ description: 'A change to a pet. Experimental.' })
export class PetEvent {
  @Field(() => PetEventKind, { description: 'What happened.' })
  kind!: PetEventKind;

  @Field(() => Int64ID, { description: "The pet's id." })
  id!: string;

  @Field(() => Pet, { nullable: true, description: 'The pet as it is now; null when it was deleted.' })
  pet!: Pet | null;
}

@ObjectType({ description: 'A change to an order. Experimental.' })
export class OrderEvent {
  @Field(() => OrderEventKind, { description: 'What happened.' })
  kind!: OrderEventKind;

  @Field(() => Int64ID, { description: "The order's id." })
  id!: string;

  @Field(() => Order, { nullable: true, description: 'The order as it is now; null when it was cancelled.' })
  order!: Order | null;
}

@ObjectType({ description: 'Your concurrent subscriptions, across all instances. Experimental.' })
export class SubscriptionQuota {
  @Field(() => Int, { description: 'Subscriptions you have open now.' })
  active!: number;

  @Field(() => Int, { description: 'Subscriptions you may have open at once: 5 on FREE (and anonymous), 25 PRO, 100 BUSINESS, 500 ENTERPRISE.' })
  limit!: number;
}

type Data = SubscribeResolverData<unknown, { petIds?: string[] | null; ids?: string[] | null }, Context>;

function boundedIds(ids: string[] | null | undefined, name: string): string[] | null {
  if (ids && ids.length > MAX_FILTER_IDS) throw badInput(`${name} takes at most ${MAX_FILTER_IDS} ids; got ${ids.length}`);
  return ids ?? null;
}

/**
 * Live updates (docs/contract.md §9): events only. Stock events carry the row as committed; pet
 * and order events name what changed, and the rows are read as they are when delivered.
 */
@Resolver()
export class LiveResolver {
  @Directive('@stability(level: EXPERIMENTAL)')
  @Subscription(() => InventoryItem, {
    description:
      "Experimental. A pet's stock as each change to it left it (the pet created, an order placed, cancelled or completed, updateInventory, or a write made outside the API), in commit order. Anonymous callers allowed.",
    subscribe: ({ args, context }: Data) =>
      context.services.live.hub.stockChanges(boundedIds(args.petIds, 'petIds'), context.backlog),
  })
  inventoryChanged(
    @Root() { petId, quantity, status }: StockChange,
    @Arg('petIds', () => [Int64ID], { nullable: true, description: `Only these pets (at most ${MAX_FILTER_IDS}); all when omitted.` })
    _petIds?: string[] | null,
  ): InventoryItem {
    return Object.assign(new InventoryItem(), { petId, quantity, status });
  }

  @Directive('@stability(level: EXPERIMENTAL)')
  @Subscription(() => PetEvent, {
    description: 'Experimental. Every pet created, updated or deleted. Anonymous callers allowed.',
    subscribe: ({ args, context }: Data) => context.services.live.hub.petChanges(boundedIds(args.ids, 'ids'), context.backlog),
  })
  async petChanged(
    @Root() change: PetChange,
    @Ctx() { loaders }: Context,
    @Arg('ids', () => [Int64ID], { nullable: true, description: `Only these pets (at most ${MAX_FILTER_IDS}); all when omitted.` })
    _ids?: string[] | null,
  ): Promise<PetEvent> {
    const pet = change.kind === 'DELETED' ? null : await loaders.petById.load(change.id);
    return { kind: PetEventKind[change.kind satisfies PetChangeKind], id: change.id, pet };
  }

  @Directive('@stability(level: EXPERIMENTAL)')
  @Subscription(() => OrderEvent, {
    description: "Experimental. Orders placed, completed or cancelled: your own, or every order for an admin. Needs a key.",
    subscribe: ({ context }: Data) => context.services.live.hub.orderChanges(orderScopeOf(context.caller), context.backlog),
  })
  async orderChanged(@Root() change: OrderChange, @Ctx() { loaders }: Context): Promise<OrderEvent> {
    const order = change.kind === 'CANCELLED' ? null : await loaders.orderById.load(change.id);
    return { kind: OrderEventKind[change.kind satisfies OrderChangeKind], id: change.id, order };
  }
}

/** `rateLimit { subscriptions { active limit } }`. */
@Resolver(() => RateLimit)
export class SubscriptionQuotaResolver {
  @Directive('@stability(level: EXPERIMENTAL)')
  @FieldResolver(() => SubscriptionQuota, { description: 'Experimental. Your concurrent subscriptions and their cap.' })
  async subscriptions(@Ctx() { caller, services }: Context): Promise<SubscriptionQuota> {
    return { active: await services.live.slots.active(identityOf(caller)), limit: subscriptionCapOf(caller) };
  }
}
