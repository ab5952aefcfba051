import { Directive, Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { NAME_MAX } from '../common/bounds';
import { Int64ID } from '../common/id.scalar';
import { Category } from './category.entity';
import type { InventoryItem } from './inventory-item.entity';
import { PetStatus } from './pet-status';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Entity('pets')
// Keyset pages of a category or a status (migration FilteredPageIndexes).
@Index('IDX_pets_category_id_id', ['categoryId', 'id'])
@Index('IDX_pets_status_id', ['status', 'id'])
@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'An animal in the catalogue.', simpleResolvers: true })
export class Pet {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  @Field(() => Int64ID, { description: 'Unique identifier assigned on creation.' })
  id!: string;

  // Name search (nameContains) uses a trigram index, made by a migration: TypeORM cannot describe it.
  @Index('IDX_pets_name_trigrams', { synchronize: false })
  @Column({ type: 'varchar', length: NAME_MAX })
  @Field(() => String, { description: `The animal's name, 1 to ${NAME_MAX} characters.` })
  name!: string;

  @Column({ name: 'category_id', type: 'bigint' })
  @Field(() => Int64ID, { description: 'ID of the category the animal belongs to.' })
  categoryId!: string;

  /** Set when a read joined the category in (the query asked for it). */
  @ManyToOne(() => Category, { onDelete: 'RESTRICT', nullable: false })
  @JoinColumn({ name: 'category_id' })
  category?: Category;

  /** Set when a read joined the stock in; not a column. */
  inventory?: InventoryItem;

  @Column({ type: 'enum', enum: PetStatus, enumName: 'pet_status', default: PetStatus.AVAILABLE })
  @Field(() => PetStatus, { description: 'Status of the pet, set by its creator; only an AVAILABLE pet can be ordered.' })
  status!: PetStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
