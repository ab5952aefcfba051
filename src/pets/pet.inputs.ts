import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { Int64ID } from '../common/id.scalar';
import { NAME_MAX } from '../common/bounds';
import { NotNull, TrimmedLength, WhenPresent } from '../common/validators';
import type { Pet } from './pet.entity';
import { PetStatus } from './pet-status';

@InputType('NewPet', { description: 'A pet to add to the catalogue.' })
export class NewPetInput implements Partial<Pet> {
  @Field(() => String, { description: `The animal's name, 1 to ${NAME_MAX} characters after trimming.` })
  @TrimmedLength(1, NAME_MAX)
  name!: string;

  @Field(() => Int64ID, { description: 'ID of the category the animal belongs to.' })
  categoryId!: string;

  @Field(() => PetStatus, { nullable: true, description: 'Status of the pet; AVAILABLE when left out.' })
  @WhenPresent()
  @NotNull()
  status?: PetStatus;
}

@InputType('PetUpdate', { description: 'Changes to a pet; fields left out stay as they are.' })
export class PetUpdateInput implements Partial<Pet> {
  @Field(() => String, { nullable: true, description: `A new name, 1 to ${NAME_MAX} characters after trimming.` })
  @WhenPresent()
  @TrimmedLength(1, NAME_MAX)
  name?: string;

  @Field(() => Int64ID, { nullable: true, description: 'ID of the new category.' })
  @WhenPresent()
  @NotNull()
  categoryId?: string;

  @Field(() => PetStatus, { nullable: true, description: 'The new status.' })
  @WhenPresent()
  @NotNull()
  status?: PetStatus;
}

@InputType('PetFilter', { description: 'Narrows a list of pets; every field given must match.' })
export class PetFilterInput {
  @Field(() => PetStatus, { nullable: true, description: 'Only pets with this status.' })
  status?: PetStatus | null;

  @Field(() => Int64ID, { nullable: true, description: 'Only pets of this category.' })
  categoryId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only pets whose name contains this text, ignoring case.' })
  @IsOptional()
  @MaxLength(NAME_MAX, { message: `nameContains must be at most ${NAME_MAX} characters` })
  nameContains?: string | null;
}
