import { Arg, Args, Authorized, Ctx, Directive, FieldResolver, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ApiKeyRole } from '../auth/role';
import { Connection, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { pageRequest } from '../common/page';
import { PagingArgs } from '../common/paging.args';
import { COST } from '../common/query-cost';
import { Pet } from '../pets/pet.entity';
import { FieldRateLimit } from '../limits/field-limit';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency';
import { Order } from './order.entity';
import { orderScopeOf } from './order-scope';
import type { StoreContext as Context } from './store.context';
import { NewOrderInput, OrderFilterInput } from './store.inputs';
import { PRIVATE_HINT } from '../common/cache-hints';

@Directive(PRIVATE_HINT)
@ObjectType({ description: 'A page of orders, newest first.' })
export class OrderConnection extends Connection(Order, 'order') {}

@Resolver(() => Order)
export class OrderResolver {
  @Query(() => Order, {
    nullable: true,
    complexity: COST.LOOKUP,
    description: "One order by id: your own, or any for an admin; null otherwise. Needs a key.",
  })
  order(@Arg('id', () => Int64ID, { description: "The order's id." }) id: string, @Ctx() { caller, loaders }: Context) {
    return loaders.visibleOrderById(orderScopeOf(caller)).load(id);
  }

  @Query(() => OrderConnection, {
    description: "Your orders (an admin's: every order), newest first. Needs a key.",
  })
  async orders(
    @Args() paging: PagingArgs,
    @Arg('filter', () => OrderFilterInput, { nullable: true, description: 'Only orders that match.' }) filter: OrderFilterInput | null,
    @Ctx() { caller, services }: Context,
  ) {
    const scope = orderScopeOf(caller);
    const page = await services.orders.list(scope, filter ?? {}, pageRequest(paging));
    return toConnection(page, () => services.orders.count(scope, filter ?? {}));
  }

  @FieldResolver(() => Pet, { complexity: COST.LOOKUP, description: 'The animal ordered.' })
  pet(@Root() order: Order, @Ctx() { loaders }: Context) {
    return loaders.petById.load(order.petId);
  }

  @Authorized()
  @FieldRateLimit(10)
  @Mutation(() => Order, {
    nullable: true,
    description:
      'At most 10 a minute per key. Takes units of an AVAILABLE pet from stock and opens an order, atomically. A retry with the same idempotency key and input returns the same order and takes no stock again. Needs a key.',
  })
  placeOrder(
    @Arg('input', () => NewOrderInput, { description: 'What to order.' }) input: NewOrderInput,
    @Arg('idempotencyKey', () => String, {
      nullable: true,
      description: `Makes retries safe: 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, unique per order you mean to place, remembered for 24 hours per API key.`,
    })
    idempotencyKey: string | null,
    @Ctx() { caller, services }: Context,
  ) {
    return services.orders.place(orderScopeOf(caller), input, idempotencyKey);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Order, { nullable: true, description: 'Marks an open order complete (fulfilled). Admin only.' })
  completeOrder(@Arg('id', () => Int64ID, { description: "The order's id." }) id: string, @Ctx() { services }: Context) {
    return services.orders.complete(id);
  }

  @Authorized()
  @Mutation(() => Int64ID, {
    nullable: true,
    description: "Cancels an open order: its units return to stock and the order is removed. Your own orders, or any for an admin. Returns the id.",
  })
  cancelOrder(@Arg('id', () => Int64ID, { description: "The order's id." }) id: string, @Ctx() { caller, services }: Context) {
    return services.orders.cancel(id, orderScopeOf(caller));
  }
}
