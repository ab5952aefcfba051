import { Arg, Args, Authorized, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { Connection, connectionCost, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { pageRequest } from '../common/page';
import { PagingArgs } from '../common/paging.args';
import type { Context } from '../context';
import { ApiKey } from './api-key.entity';
import { NewApiKeyInput } from './api-key.inputs';
import { ApiKeyRole } from './role';

@ObjectType({ description: 'A page of API keys.' })
export class ApiKeyConnection extends Connection(ApiKey, 'API key') {}

@ObjectType({ description: 'A newly issued key: the only time the key itself is shown.' })
export class IssuedApiKey {
  @Field(() => String, { description: 'The key, to send as the X-API-Key header. Store it now: it cannot be shown again.' })
  key!: string;

  @Field(() => ApiKey, { description: 'The key as it is stored.' })
  apiKey!: ApiKey;
}

@Authorized(ApiKeyRole.ADMIN)
@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Query(() => ApiKeyConnection, { complexity: connectionCost, description: 'Every API key, revoked ones included, in id order. Admin only.' })
  async apiKeys(@Args() paging: PagingArgs, @Ctx() { services }: Context) {
    const page = await services.apiKeys.list(pageRequest(paging));
    return toConnection(page, () => services.apiKeys.count());
  }

  @Mutation(() => IssuedApiKey, { description: 'Issues a key. Admin only.' })
  createApiKey(@Arg('input', () => NewApiKeyInput, { description: 'The key to issue.' }) input: NewApiKeyInput, @Ctx() { services }: Context) {
    return services.apiKeys.create(input);
  }

  @Mutation(() => ApiKey, { description: 'Revokes a key: from then on it is refused with INVALID_API_KEY. Admin only.' })
  revokeApiKey(@Arg('id', () => Int64ID, { description: "The key's id." }) id: string, @Ctx() { services }: Context) {
    return services.apiKeys.revoke(id);
  }
}
