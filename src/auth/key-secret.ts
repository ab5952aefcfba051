import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PREFIX = 'psk_';
/** 43 base62 characters carry 256 bits, more than the 32 characters the contract asks for (docs/contract.md §4). */
const KEY_LENGTH = 43;
const KEY_PATTERN = /^psk_[0-9A-Za-z]{32,200}$/;

/** A new key: `psk_` and 43 uniformly random base62 characters. */
export function generateApiKey(): string {
  let body = '';
  while (body.length < KEY_LENGTH) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && body.length < KEY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return KEY_PREFIX + body;
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** What the database keeps: the key's SHA-256, in hex. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
