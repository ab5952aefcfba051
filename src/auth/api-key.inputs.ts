import { IsOptional, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { badInput } from '../errors';
import { NAME_MAX } from '../common/bounds';
import { TrimmedLength } from '../common/validators';
import { Plan } from './plans';
import { ApiKeyRole } from './role';

export const MAX_PER_MINUTE = 1_000_000;
export const MAX_PER_DAY = 1_000_000_000;

@InputType('NewApiKey', { description: 'A key to issue. Custom figures are for ENTERPRISE keys, which need both.' })
export class NewApiKeyInput {
  @Field(() => String, { description: `Who or what will use the key, 1 to ${NAME_MAX} characters after trimming.` })
  @TrimmedLength(1, NAME_MAX)
  name!: string;

  @Field(() => Plan, { description: 'The rate-limit plan.' })
  plan!: Plan;

  @Field(() => ApiKeyRole, { defaultValue: ApiKeyRole.CLIENT, description: 'What the key may do; CLIENT when left out.' })
  role!: ApiKeyRole;

  @Field(() => Int, { nullable: true, description: `ENTERPRISE only: requests per minute, 1 to ${MAX_PER_MINUTE.toLocaleString('en')}.` })
  @IsOptional()
  @Min(1, { message: 'requestsPerMinute must be at least 1' })
  @Max(MAX_PER_MINUTE, { message: `requestsPerMinute must be at most ${MAX_PER_MINUTE}` })
  requestsPerMinute?: number | null;

  @Field(() => Int, { nullable: true, description: `ENTERPRISE only: requests per day, 1 to ${MAX_PER_DAY.toLocaleString('en')}.` })
  @IsOptional()
  @Min(1, { message: 'requestsPerDay must be at least 1' })
  @Max(MAX_PER_DAY, { message: `requestsPerDay must be at most ${MAX_PER_DAY}` })
  requestsPerDay?: number | null;
}

/**
 * Custom figures are for ENTERPRISE keys, which need both; a day never allows fewer requests than
 * a minute (the day window would refuse first, and the minute figure would mean nothing).
 * The createApiKey mutation and `npm run apikey` both check through here.
 */
export function checkCustomQuota(input: Pick<NewApiKeyInput, 'plan' | 'requestsPerMinute' | 'requestsPerDay'>): void {
  const { plan, requestsPerMinute: perMinute, requestsPerDay: perDay } = input;
  if (plan !== Plan.ENTERPRISE) {
    if (perMinute != null || perDay != null) {
      throw badInput(`requestsPerMinute and requestsPerDay are for ENTERPRISE keys; the ${plan.toUpperCase()} plan sets its own`);
    }
    return;
  }
  if (perMinute == null || perDay == null) throw badInput('An ENTERPRISE key needs both requestsPerMinute and requestsPerDay');
  if (perDay < perMinute) {
    throw badInput(`requestsPerDay must be at least requestsPerMinute: expected at least ${perMinute}, got ${perDay}`);
  }
}
