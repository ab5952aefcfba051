import { IsOptional, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int } from 'type-graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './bounds';

@ArgsType()
export class PagingArgs {
  @Field(() => Int, { nullable: true, defaultValue: DEFAULT_PAGE_SIZE, description: `How many items to return, 1 to ${MAX_PAGE_SIZE}.` })
  @Min(1, { message: `first must be at least 1` })
  @Max(MAX_PAGE_SIZE, { message: `first must be at most ${MAX_PAGE_SIZE}` })
  first!: number;

  @Field(() => String, { nullable: true, description: 'Return the items after this cursor (pageInfo.endCursor of the previous page).' })
  @IsOptional()
  @MaxLength(200, { message: 'after must be a cursor from a previous page' })
  after?: string | null;
}
