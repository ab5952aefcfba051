import { Directive, Field, Int, ObjectType } from 'type-graphql';
import { Check, Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { MAX_STOCK } from '../common/bounds';
import { Int64ID } from '../common/id.scalar';
import { Pet } from './pet.entity';
import { PetStatus } from './pet-status';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Entity('inventory_items')
// Keyset pages of a stock status (migration FilteredPageIndexes).
@Index('IDX_inventory_items_status_pet_id', ['status', 'petId'])
// The floor is the invariant no concurrency may break; the ceiling bounds what an admin may set.
@Check('inventory_never_negative', '"quantity" >= 0')
@Directive(CATALOGUE_HINT)
@ObjectType({ description: "A pet's stock: how many units the store holds, and the status derived from it.", simpleResolvers: true })
export class InventoryItem {
  @PrimaryColumn({ name: 'pet_id', type: 'bigint' })
  @Field(() => Int64ID, { description: 'ID of the animal this entry tracks.' })
  petId!: string;

  @OneToOne(() => Pet, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'pet_id' })
  pet?: Pet;

  @Column({ type: 'integer', default: 0 })
  @Field(() => Int, { description: `Current stock count, never below 0; an admin sets it from 0 to ${MAX_STOCK.toLocaleString('en')}.` })
  quantity!: number;

  @Column({ type: 'enum', enum: PetStatus, enumName: 'pet_status', default: PetStatus.SOLD })
  @Field(() => PetStatus, {
    description:
      'Derived from the stock: AVAILABLE above zero; PENDING at zero with an open order for the pet; SOLD otherwise.',
  })
  status!: PetStatus;
}
