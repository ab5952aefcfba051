import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../errors';
import { IDEMPOTENCY_TTL_MS } from './idempotency-key.entity';
import type { NewOrderInput } from './store.inputs';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** What a key was first used for: the same key must come back with the same input. */
export function orderRequestHash(input: NewOrderInput): string {
  const canonical = JSON.stringify([input.petId, input.quantity, input.shipDate?.toISOString() ?? null]);
  return createHash('sha256').update(canonical).digest('hex');
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; orderId: string | null };

/**
 * Claims an idempotency key inside the placing transaction. A concurrent transaction holding the
 * same key makes the INSERT wait for it: once it commits, this one replays its order; if it rolled
 * back, the key is free again and this one places the order.
 */
export async function claimIdempotencyKey(
  manager: EntityManager,
  apiKeyId: string,
  key: string,
  requestHash: string,
): Promise<Claim> {
  await manager.query(
    `DELETE FROM idempotency_keys
      WHERE api_key_id = $1 AND key = $2 AND created_at < now() - $3 * interval '1 millisecond'`,
    [apiKeyId, key, IDEMPOTENCY_TTL_MS],
  );
  // Twice at most: the row that made the INSERT give way may expire before it can be read.
  for (let attempt = 0; ; attempt += 1) {
    const inserted = await manager.query(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (api_key_id, key) DO NOTHING RETURNING key`,
      [apiKeyId, key, requestHash],
    );
    if (inserted.length > 0) return { kind: 'claimed' };
    const [existing]: { request_hash: string; order_id: string | null }[] = await manager.query(
      'SELECT request_hash, order_id FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
      [apiKeyId, key],
    );
    if (!existing && attempt === 0) continue;
    if (!existing || existing.request_hash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used with a different order input');
    }
    return { kind: 'replay', orderId: existing.order_id };
  }
}

export async function recordIdempotentOrder(manager: EntityManager, apiKeyId: string, key: string, orderId: string) {
  await manager.query('UPDATE idempotency_keys SET order_id = $3 WHERE api_key_id = $1 AND key = $2', [apiKeyId, key, orderId]);
}

/** Forgets keys older than a day (the index on created_at keeps this cheap). */
export async function purgeExpiredIdempotencyKeys(manager: EntityManager): Promise<void> {
  await manager.query(`DELETE FROM idempotency_keys WHERE created_at < now() - $1 * interval '1 millisecond'`, [
    IDEMPOTENCY_TTL_MS,
  ]);
}
