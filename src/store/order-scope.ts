import { type Caller, requireKey } from '../auth/caller';
import { ApiKeyRole } from '../auth/role';

/** Whose orders a caller may see: its own, or every order for an admin. */
export interface OrderScope {
  apiKeyId: string;
  admin: boolean;
}

/** Orders need a key (UNAUTHENTICATED without one). */
export function orderScopeOf(caller: Caller): OrderScope {
  const key = requireKey(caller);
  return { apiKeyId: key.id, admin: key.role === ApiKeyRole.ADMIN };
}
