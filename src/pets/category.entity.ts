import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { Int64ID } from '../common/id.scalar';

@Entity('categories')
@ObjectType({ description: 'A kind of animal the store sells, such as dogs or cats.' })
export class Category {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  @Field(() => Int64ID, { description: 'Unique identifier assigned on creation.' })
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  @Field(() => String, { description: 'The category name (a kind of animal), 1 to 100 characters.' })
  name!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  @Field(() => String, { nullable: true, description: 'A short description of the category, at most 500 characters.' })
  description!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
