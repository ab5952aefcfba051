import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApiKey } from '../auth/api-key.entity';
import { Order } from './order.entity';

/** How long a placeOrder idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * An idempotency key a client sent with placeOrder, scoped to its API key. It remembers what was
 * asked (a hash of the input) and the order that answered it.
 */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn({ name: 'api_key_id', type: 'bigint' })
  apiKeyId!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key!: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;

  /** SHA-256 of the order input: the same key with other input is refused. */
  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash!: string;

  /** Null once the order is cancelled: a retry then learns so, and takes no stock again. */
  @Column({ name: 'order_id', type: 'bigint', nullable: true })
  orderId!: string | null;

  @ManyToOne(() => Order, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'order_id' })
  order?: Order;

  @Index()
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
