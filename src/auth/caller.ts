import { ApiError } from '../errors';
import type { Quota } from '../limits/quota';
import type { Plan } from './plans';
import { ApiKeyRole } from './role';

/** What the gateway knows of a valid key while serving one request. */
export interface AuthenticatedKey {
  id: string;
  role: ApiKeyRole;
  plan: Plan;
  quota: Quota;
}

/** Who sent a request: a valid key, or an anonymous client known by its address. */
export type Caller = { kind: 'anonymous'; address: string } | { kind: 'key'; address: string; key: AuthenticatedKey };

export function requireKey(caller: Caller): AuthenticatedKey {
  if (caller.kind !== 'key') {
    throw new ApiError('UNAUTHENTICATED', 'This operation needs an API key in the X-API-Key header');
  }
  return caller.key;
}

export function requireAdmin(caller: Caller): AuthenticatedKey {
  const key = requireKey(caller);
  if (key.role !== ApiKeyRole.ADMIN) throw new ApiError('FORBIDDEN', 'This operation needs an admin key');
  return key;
}
