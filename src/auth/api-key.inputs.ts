import { IsOptional, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { TrimmedLength } from '../common/validators';
import { Plan } from '../limits/plans';
import { NAME_MAX } from '../pets/pet.inputs';
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
