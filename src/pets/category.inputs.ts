import { IsOptional } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { DESCRIPTION_MAX, NAME_MAX } from '../common/bounds';
import { TrimmedLength, WhenPresent } from '../common/validators';
import type { Category } from './category.entity';

@InputType('NewCategory', { description: 'A category to add to the catalogue.' })
export class NewCategoryInput implements Partial<Category> {
  @Field(() => String, { description: `The category name, 1 to ${NAME_MAX} characters after trimming.` })
  @TrimmedLength(1, NAME_MAX)
  name!: string;

  @Field(() => String, { nullable: true, description: `A short description, at most ${DESCRIPTION_MAX} characters after trimming.` })
  @IsOptional()
  @TrimmedLength(0, DESCRIPTION_MAX)
  description?: string | null;
}

@InputType('CategoryUpdate', { description: 'Changes to a category; fields left out stay as they are.' })
export class CategoryUpdateInput implements Partial<Category> {
  @Field(() => String, { nullable: true, description: `A new name, 1 to ${NAME_MAX} characters after trimming.` })
  @WhenPresent()
  @TrimmedLength(1, NAME_MAX)
  name?: string;

  @Field(() => String, { nullable: true, description: `A new description, at most ${DESCRIPTION_MAX} characters after trimming; null removes it.` })
  @IsOptional()
  @TrimmedLength(0, DESCRIPTION_MAX)
  description?: string | null;
}
