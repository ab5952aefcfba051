import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { Pet } from '../pets/pet.entity';
import { InventoryItem } from './inventory-item.entity';

@Resolver(() => InventoryItem)
export class InventoryResolver {
  @FieldResolver(() => Pet, { description: 'The animal this stock belongs to.' })
  pet(@Root() item: InventoryItem, @Ctx() { loaders }: Context) {
    return loaders.petById.load(item.petId);
  }
}
