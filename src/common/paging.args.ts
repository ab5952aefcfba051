import { ArgsType, Field, Int } from 'type-graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './bounds';
import { Cursor, PageSize } from './validators';

@ArgsType()
export class PagingArgs {
  @Field(() => Int, { nullable: true, defaultValue: DEFAULT_PAGE_SIZE, description: `How many items to return, 1 to ${MAX_PAGE_SIZE}.` })
  @PageSize(MAX_PAGE_SIZE)
  first!: number;

  @Field(() => String, { nullable: true, description: 'Return the items after this cursor (pageInfo.endCursor of the previous page).' })
  @Cursor()
  after?: string | null;
}
