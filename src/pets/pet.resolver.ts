import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Authorized, Ctx, Directive, FieldResolver, Info, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ApiKeyRole } from '../auth/role';
import { Connection, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { type Page, pageRequest } from '../common/page';
import { PAGE_FIELDS } from '../common/page-fields';
import { PagingArgs } from '../common/paging.args';
import { COST } from '../common/query-cost';
import { selectedFields } from '../common/selection';
import { Category } from './category.entity';
import { InventoryItem } from './inventory-item.entity';
import { Pet } from './pet.entity';
import { NewPetInput, PetFilterInput, PetUpdateInput } from './pet.inputs';
import { shapeOfPetField, shapeOfPetPage } from './pet-shape';
import type { PetsContext as Context } from './pets.context';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'A page of pets.' })
export class PetConnection extends Connection(Pet, 'pet') {}

/** The fields of a connection that show its page. */
const NO_PAGE: Page<Pet> = { rows: [], hasNextPage: false };

@Resolver(() => Pet)
export class PetResolver {
  @Query(() => Pet, { nullable: true, complexity: COST.LOOKUP, description: 'One pet by id; null when there is none.' })
  async pet(
    @Arg('id', () => Int64ID, { description: "The pet's id." }) id: string,
    @Ctx() { loaders }: Context,
    @Info() info: GraphQLResolveInfo,
  ) {
    return loaders.petByKey.load({ id, shape: shapeOfPetField(info) });
  }

  @Query(() => PetConnection, { description: 'Pets in id order, a page at a time.' })
  async pets(
    @Args() paging: PagingArgs,
    @Arg('filter', () => PetFilterInput, { nullable: true, description: 'Only pets that match.' })
    filter: PetFilterInput | null,
    @Ctx() { services, loaders }: Context,
    @Info() info: GraphQLResolveInfo,
  ) {
    // A count alone (`pets { totalCount }`) shows no page: its statement is skipped.
    const asksForPage = [...selectedFields(info)].some((field) => PAGE_FIELDS.has(field));
    const page = asksForPage ? await services.pets.list(filter ?? {}, pageRequest(paging), shapeOfPetPage(info)) : NO_PAGE;
    return toConnection(page, () => loaders.petCount.load(filter ?? {}));
  }

  // Joined into the pet's own statement where a page or a lookup asks for it: an object, no statement of its own.
  @FieldResolver(() => Category, { description: 'The category the animal belongs to.' })
  category(@Root() pet: Pet, @Ctx() { loaders }: Context) {
    return pet.category ?? loaders.categoryById.load(pet.categoryId);
  }

  @FieldResolver(() => InventoryItem, { description: "The pet's stock." })
  inventory(@Root() pet: Pet, @Ctx() { loaders }: Context) {
    return pet.inventory ?? loaders.inventoryByPetId.load(pet.id);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Pet, { nullable: true, description: 'Adds a pet to the catalogue, with 0 units of stock. Admin only.' })
  createPet(@Arg('input', () => NewPetInput, { description: 'The new pet.' }) input: NewPetInput, @Ctx() { services }: Context) {
    return services.pets.create(input);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Pet, { nullable: true, description: 'Changes a pet. Admin only.' })
  updatePet(
    @Arg('id', () => Int64ID, { description: "The pet's id." }) id: string,
    @Arg('input', () => PetUpdateInput, { description: 'The changes.' }) input: PetUpdateInput,
    @Ctx() { services }: Context,
  ) {
    return services.pets.update(id, input);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Int64ID, {
    nullable: true,
    description: 'Removes a pet and its stock; refused with PET_HAS_ORDERS while orders name it. Returns the id. Admin only.',
  })
  deletePet(@Arg('id', () => Int64ID, { description: "The pet's id." }) id: string, @Ctx() { services }: Context) {
    return services.pets.delete(id);
  }
}
