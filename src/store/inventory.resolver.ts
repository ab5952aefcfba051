import { Arg, Args, Authorized, Ctx, Directive, FieldResolver, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ApiKeyRole } from '../auth/role';
import { Connection, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { pageRequest } from '../common/page';
import { PagingArgs } from '../common/paging.args';
import { COST } from '../common/query-cost';
import { Pet } from '../pets/pet.entity';
import { InventoryItem } from '../pets/inventory-item.entity';
import type { StoreContext as Context } from './store.context';
import { InventoryFilterInput, InventoryUpdateInput } from './store.inputs';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'A page of stock entries, in pet id order.' })
export class InventoryConnection extends Connection(InventoryItem, 'stock entry', 'stock entries') {}

@Resolver(() => InventoryItem)
export class InventoryResolver {
  @Query(() => InventoryItem, { nullable: true, complexity: COST.LOOKUP, description: "A pet's stock; null when there is no such pet." })
  inventoryItem(@Arg('petId', () => Int64ID, { description: "The pet's id." }) petId: string, @Ctx() { loaders }: Context) {
    return loaders.inventoryByPetId.load(petId);
  }

  @Query(() => InventoryConnection, { description: "Every pet's stock, in pet id order." })
  async inventory(
    @Args() paging: PagingArgs,
    @Arg('filter', () => InventoryFilterInput, { nullable: true, description: 'Only stock that matches.' })
    filter: InventoryFilterInput | null,
    @Ctx() { services }: Context,
  ) {
    const page = await services.inventory.list(filter ?? {}, pageRequest(paging));
    return toConnection(page, () => services.inventory.count(filter ?? {}), (item) => item.petId);
  }

  @FieldResolver(() => Pet, { complexity: COST.LOOKUP, description: 'The animal this stock belongs to.' })
  pet(@Root() item: InventoryItem, @Ctx() { loaders }: Context) {
    return loaders.petById.load(item.petId);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => InventoryItem, { nullable: true, description: "Sets a pet's stock count; its status is derived anew. Admin only." })
  updateInventory(
    @Arg('petId', () => Int64ID, { description: "The pet's id." }) petId: string,
    @Arg('input', () => InventoryUpdateInput, { description: 'The new count.' }) input: InventoryUpdateInput,
    @Ctx() { services }: Context,
  ) {
    return services.inventory.update(petId, input.quantity);
  }
}
