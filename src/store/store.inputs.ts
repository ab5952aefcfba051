import { IsInt, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { Int64ID } from '../common/id.scalar';
import { PetStatus } from '../pets/pet-status';
import { MAX_ORDER_QUANTITY, MAX_STOCK } from '../common/bounds';

@InputType('NewOrder', { description: 'An order to place for units of one pet.' })
export class NewOrderInput {
  @Field(() => Int64ID, { description: 'ID of the animal to order; it must be AVAILABLE.' })
  petId!: string;

  @Field(() => Int, { description: `Number of units, 1 to ${MAX_ORDER_QUANTITY.toLocaleString('en')}; the stock must cover it.` })
  @IsInt()
  @Min(1, { message: 'quantity must be at least 1' })
  @Max(MAX_ORDER_QUANTITY, { message: `quantity must be at most ${MAX_ORDER_QUANTITY}` })
  quantity!: number;

  @Field(() => Date, { nullable: true, description: 'Expected ship date (ISO 8601 date-time).' })
  shipDate?: Date | null;
}

@InputType('InventoryUpdate', { description: "A pet's new stock count." })
export class InventoryUpdateInput {
  @Field(() => Int, { description: `The new stock count, 0 to ${MAX_STOCK.toLocaleString('en')}.` })
  @IsInt()
  @Min(0, { message: 'quantity must be at least 0' })
  @Max(MAX_STOCK, { message: `quantity must be at most ${MAX_STOCK}` })
  quantity!: number;
}

@InputType('OrderFilter', { description: 'Narrows a list of orders; every field given must match.' })
export class OrderFilterInput {
  @Field(() => Int64ID, { nullable: true, description: 'Only orders for this pet.' })
  petId?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Only complete (true) or open (false) orders.' })
  complete?: boolean | null;
}

@InputType('InventoryFilter', { description: 'Narrows a list of stock entries.' })
export class InventoryFilterInput {
  @Field(() => PetStatus, { nullable: true, description: 'Only stock with this derived status.' })
  status?: PetStatus | null;
}
