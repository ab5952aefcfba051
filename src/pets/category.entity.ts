import { Directive, Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DESCRIPTION_MAX, NAME_MAX } from '../common/bounds';
import { Int64ID } from '../common/id.scalar';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Entity('categories')
@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'A kind of animal the store sells, such as dogs or cats.', simpleResolvers: true })
export class Category {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  @Field(() => Int64ID, { description: 'Unique identifier assigned on creation.' })
  id!: string;

  @Column({ type: 'varchar', length: NAME_MAX })
  @Field(() => String, { description: `The category name (a kind of animal), 1 to ${NAME_MAX} characters.` })
  name!: string;

  @Column({ type: 'varchar', length: DESCRIPTION_MAX, nullable: true })
  @Field(() => String, { nullable: true, description: `A short description of the category, at most ${DESCRIPTION_MAX} characters.` })
  description!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
