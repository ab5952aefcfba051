import { Directive, Field, Int, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { NAME_MAX } from '../common/bounds';
import { Int64ID } from '../common/id.scalar';
import type { Quota } from '../limits/quota';
import { Plan, quotaOf } from './plans';
import { ApiKeyRole } from './role';
import { PRIVATE_HINT } from '../common/cache-hints';

@Entity('api_keys')
@Directive(PRIVATE_HINT)
@ObjectType({ description: 'An API key as admins see it. The key itself is shown once, at creation, and stored only as a hash.' })
export class ApiKey {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  @Field(() => Int64ID, { description: 'Unique identifier assigned on creation.' })
  id!: string;

  @Column({ type: 'varchar', length: NAME_MAX })
  @Field(() => String, { description: 'A name that says who or what uses the key.' })
  name!: string;

  /** SHA-256 of the key, hex: keys carry 190 random bits, so a slow hash would add nothing. */
  @Index({ unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  @Column({ type: 'enum', enum: Plan, enumName: 'api_key_plan' })
  @Field(() => Plan, { description: 'The rate-limit plan of the key.' })
  plan!: Plan;

  @Column({ type: 'enum', enum: ApiKeyRole, enumName: 'api_key_role', default: ApiKeyRole.CLIENT })
  @Field(() => ApiKeyRole, { description: 'What the key may do.' })
  role!: ApiKeyRole;

  /** Custom figures; set only on ENTERPRISE keys (the plan decides the others). */
  @Column({ name: 'requests_per_minute', type: 'integer', nullable: true })
  customPerMinute!: number | null;

  @Column({ name: 'requests_per_day', type: 'integer', nullable: true })
  customPerDay!: number | null;

  get quota(): Quota {
    return quotaOf(this.plan, { perMinute: this.customPerMinute, perDay: this.customPerDay });
  }

  @Field(() => Int, { description: 'Requests accepted per minute: the plan\'s figure, or the custom one on ENTERPRISE.' })
  get requestsPerMinute(): number {
    return this.quota.perMinute;
  }

  @Field(() => Int, { description: 'Requests accepted per day: the plan\'s figure, or the custom one on ENTERPRISE.' })
  get requestsPerDay(): number {
    return this.quota.perDay;
  }

  /** The row that stands for ADMIN_API_KEY: rewritten at every start, never revoked by hand. */
  @Index({ unique: true, where: '"from_environment"' })
  @Column({ name: 'from_environment', type: 'boolean', default: false })
  fromEnvironment!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  @Field(() => Date, { description: 'When the key was created.' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the key was revoked; a revoked key is refused with INVALID_API_KEY.' })
  revokedAt!: Date | null;
}
