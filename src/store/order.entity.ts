import { Directive, Field, Int, ObjectType } from 'type-graphql';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ApiKey } from '../auth/api-key.entity';
import { MAX_ORDER_QUANTITY } from '../common/bounds';
import { Int64ID } from '../common/id.scalar';
import { Pet } from '../pets/pet.entity';
import { PRIVATE_HINT } from '../common/cache-hints';

@Entity('orders')
@Check('order_quantity_range', `"quantity" >= 1 AND "quantity" <= ${MAX_ORDER_QUANTITY}`)
@Index(['apiKeyId', 'id'])
@Directive(PRIVATE_HINT)
@ObjectType({ description: 'An order for units of one pet, placed by an API key.', simpleResolvers: true })
export class Order {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  @Field(() => Int64ID, { description: 'Unique order identifier.' })
  id!: string;

  @Index()
  @Column({ name: 'pet_id', type: 'bigint' })
  @Field(() => Int64ID, { description: 'ID of the animal in this order.' })
  petId!: string;

  @ManyToOne(() => Pet, { onDelete: 'RESTRICT', nullable: false })
  @JoinColumn({ name: 'pet_id' })
  pet?: Pet;

  @Column({ type: 'integer' })
  @Field(() => Int, { description: `Number of units ordered, 1 to ${MAX_ORDER_QUANTITY.toLocaleString('en')}.` })
  quantity!: number;

  @Column({ name: 'ship_date', type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'Expected or actual ship date (ISO 8601 date-time).' })
  shipDate!: Date | null;

  @Column({ type: 'boolean', default: false })
  @Field(() => Boolean, { description: 'Whether the order has been fulfilled.' })
  complete!: boolean;

  /** The key that placed the order: only it, or an admin, sees the order. */
  @Column({ name: 'api_key_id', type: 'bigint' })
  apiKeyId!: string;

  @ManyToOne(() => ApiKey, { onDelete: 'RESTRICT', nullable: false })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
