import type { Decision, RateLimiter } from '../limits/limiter';
import type { ApiKeyService } from './api-key.service';
import type { Caller } from './caller';

/** What the key and quota resolvers use of the per-request context (context.ts builds it). */
export interface AuthContext {
  caller: Caller;
  services: { apiKeys: ApiKeyService; limiter: RateLimiter };
  /** The limiter's decision on this request, when it went through the limiter. */
  quota?: Decision;
}
