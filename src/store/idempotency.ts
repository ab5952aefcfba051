import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { IDEMPOTENCY_TTL_MS } from './idempotency-key.entity';
import type { NewOrderInput } from './store.inputs';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** What a key was first used for: the same key must come back with the same input. */
export function orderRequestHash(input: NewOrderInput): string {
  const canonical = JSON.stringify([input.petId, input.quantity, input.shipDate?.toISOString() ?? null]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** Forgets keys older than a day (the index on created_at keeps this cheap). */
export async function purgeExpiredIdempotencyKeys(manager: EntityManager): Promise<void> {
  await manager.query(`DELETE FROM idempotency_keys WHERE created_at < now() - $1 * interval '1 millisecond'`, [
    IDEMPOTENCY_TTL_MS,
  ]);
}
