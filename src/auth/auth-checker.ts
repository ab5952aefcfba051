import type { AuthChecker } from 'type-graphql';
import { type Caller, requireAdmin, requireKey } from './caller';
import { ApiKeyRole } from './role';

/**
 * `@Authorized()` needs a key, `@Authorized(ApiKeyRole.ADMIN)` an admin key. Refusals throw
 * the contract's errors (UNAUTHENTICATED, FORBIDDEN) rather than TypeGraphQL's own.
 */
export const authChecker: AuthChecker<{ caller: Caller }, ApiKeyRole> = ({ context }, roles) => {
  if (roles.includes(ApiKeyRole.ADMIN)) requireAdmin(context.caller);
  else requireKey(context.caller);
  return true;
};
