import { Arg, Args, Authorized, Ctx, Directive, Field, FieldResolver, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { Connection, toConnection } from '../common/connection';
import { Int64ID } from '../common/id.scalar';
import { pageRequest } from '../common/page';
import { PagingArgs } from '../common/paging.args';
import { notFound } from '../errors';
import { FieldRateLimit } from '../limits/field-limit';
import { identityOf } from '../limits/identity';
import { ApiKey } from './api-key.entity';
import { NewApiKeyInput } from './api-key.inputs';
import type { AuthContext as Context } from './auth.context';
import { ApiKeyRole } from './role';
import { PRIVATE_HINT } from '../common/cache-hints';

@Directive(PRIVATE_HINT)
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
  @Query(() => ApiKeyConnection, { description: 'Every API key, revoked ones included, in id order. Admin only.' })
  async apiKeys(@Args() paging: PagingArgs, @Ctx() { services }: Context) {
    const page = await services.apiKeys.list(pageRequest(paging));
    return toConnection(page, () => services.apiKeys.count());
  }

  @FieldRateLimit(20)
  @Mutation(() => IssuedApiKey, { nullable: true, description: 'Issues a key. At most 20 a minute per key. Admin only.' })
  createApiKey(@Arg('input', () => NewApiKeyInput, { description: 'The key to issue.' }) input: NewApiKeyInput, @Ctx() { services }: Context) {
    return services.apiKeys.create(input);
  }

  @Mutation(() => ApiKey, { nullable: true, description: 'Revokes a key: from then on it is refused with INVALID_API_KEY. Admin only.' })
  revokeApiKey(@Arg('id', () => Int64ID, { description: "The key's id." }) id: string, @Ctx() { services }: Context) {
    return services.apiKeys.revoke(id);
  }

  @Mutation(() => ApiKey, {
    nullable: true,
    description: 'Lifts the ban of a key that kept sending while rate limited, and forgets its refusals (not its windows). Admin only.',
  })
  async unbanApiKey(@Arg('id', () => Int64ID, { description: "The key's id." }) id: string, @Ctx() { services }: Context) {
    const apiKey = await services.apiKeys.findById(id);
    if (!apiKey) throw notFound(`API key ${id}`);
    await services.limiter.unban(identityOf({ kind: 'key', key: apiKey }));
    return apiKey;
  }

  @FieldResolver(() => Date, {
    nullable: true,
    description: 'While the key is banned for sending while rate limited: when the ban ends. Admin only.',
  })
  async bannedUntil(@Root() apiKey: ApiKey, @Ctx() { services }: Context): Promise<Date | null> {
    const until = await services.limiter.bannedUntil(identityOf({ kind: 'key', key: apiKey }));
    return until === null ? null : new Date(until);
  }
}
