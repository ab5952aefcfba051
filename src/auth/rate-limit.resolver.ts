import { Ctx, Directive, Field, Int, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import { identityOf } from '../limits/identity';
import type { AuthContext as Context } from './auth.context';
import { Plan, quotaOfCaller } from './plans';
import { PRIVATE_HINT } from '../common/cache-hints';

export enum RateLimitWindow {
  MINUTE = 'minute',
  DAY = 'day',
}

registerEnumType(RateLimitWindow, {
  name: 'RateLimitWindow',
  description: 'A rate-limit window.',
  valuesConfig: {
    MINUTE: { description: 'The window of 60 seconds that starts at your first request.' },
    DAY: { description: 'The window of 24 hours that starts at your first request.' },
  },
});

@Directive(PRIVATE_HINT)
@ObjectType({ description: 'Your quota in the window that will run out first: the one the X-RateLimit-* headers describe. Beta.' })
export class RateLimit {
  @Field(() => Plan, { description: 'Your plan (FREE for anonymous callers).' })
  plan!: Plan;

  @Field(() => Int, { description: 'Requests allowed in the window.' })
  limit!: number;

  @Field(() => Int, { description: 'Requests left in the window, this one counted.' })
  remaining!: number;

  @Field(() => Date, { description: 'When the window frees.' })
  resetAt!: Date;

  @Field(() => RateLimitWindow, { description: 'Which window this is.' })
  window!: RateLimitWindow;
}

@Resolver(() => RateLimit)
export class RateLimitResolver {
  @Directive('@stability(level: BETA)')
  @Query(() => RateLimit, {
    description: "Beta. Your own quota, like GitHub's rateLimit: the window the rate-limit headers of this response describe.",
  })
  async rateLimit(@Ctx() { caller, quota, services }: Context): Promise<RateLimit> {
    const view = quota ?? (await services.limiter.peek(identityOf(caller), quotaOfCaller(caller)));
    const { reported } = view;
    return {
      plan: caller.kind === 'key' ? caller.key.plan : Plan.FREE,
      limit: reported.limit,
      remaining: reported.remaining,
      resetAt: new Date(reported.resetAt),
      window: reported.name === 'minute' ? RateLimitWindow.MINUTE : RateLimitWindow.DAY,
    };
  }
}
