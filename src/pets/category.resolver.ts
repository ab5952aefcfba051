import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Authorized, Ctx, Directive, FieldResolver, Info, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ApiKeyRole } from '../auth/role';
import { Connection, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { pageRequest } from '../common/page';
import { PagingArgs } from '../common/paging.args';
import { COST } from '../common/query-cost';
import { Category } from './category.entity';
import { CategoryUpdateInput, NewCategoryInput } from './category.inputs';
import { PetConnection } from './pet.resolver';
import { shapeOfPetPage } from './pet-shape';
import type { PetsContext as Context } from './pets.context';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'A page of categories.' })
export class CategoryConnection extends Connection(Category, 'category', 'categories') {}

@Resolver(() => Category)
export class CategoryResolver {
  @Query(() => Category, { nullable: true, complexity: COST.LOOKUP, description: 'One category by id; null when there is none.' })
  category(@Arg('id', () => Int64ID, { description: "The category's id." }) id: string, @Ctx() { loaders }: Context) {
    return loaders.categoryById.load(id);
  }

  @Query(() => CategoryConnection, { description: 'Categories in id order, a page at a time.' })
  async categories(@Args() paging: PagingArgs, @Ctx() { services }: Context) {
    const page = await services.categories.list(pageRequest(paging));
    return toConnection(page, () => services.categories.count());
  }

  @FieldResolver(() => PetConnection, { complexity: COST.LOOKUP, description: 'The pets of this category, in id order.' })
  async pets(@Root() category: Category, @Args() paging: PagingArgs, @Ctx() { loaders }: Context, @Info() info: GraphQLResolveInfo) {
    const page = await loaders.petsOfCategory.load({ categoryId: category.id, ...pageRequest(paging), shape: shapeOfPetPage(info) });
    return toConnection(page, () => loaders.petCountOfCategory.load(category.id));
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Category, { nullable: true, description: 'Adds a category. Admin only.' })
  createCategory(
    @Arg('input', () => NewCategoryInput, { description: 'The new category.' }) input: NewCategoryInput,
    @Ctx() { services }: Context,
  ) {
    return services.categories.create(input);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Category, { nullable: true, description: 'Changes a category. Admin only.' })
  updateCategory(
    @Arg('id', () => Int64ID, { description: "The category's id." }) id: string,
    @Arg('input', () => CategoryUpdateInput, { description: 'The changes.' }) input: CategoryUpdateInput,
    @Ctx() { services }: Context,
  ) {
    return services.categories.update(id, input);
  }

  @Authorized(ApiKeyRole.ADMIN)
  @Mutation(() => Int64ID, {
    nullable: true,
    description: 'Removes a category; refused with CATEGORY_NOT_EMPTY while pets belong to it. Returns the id. Admin only.',
  })
  deleteCategory(@Arg('id', () => Int64ID, { description: "The category's id." }) id: string, @Ctx() { services }: Context) {
    return services.categories.delete(id);
  }
}
