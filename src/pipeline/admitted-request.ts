import type { Caller } from '../auth/caller';
import type { Trace } from '../common/trace';
import type { Services } from '../context';
import type { Decision } from '../limits/limiter';

/**
 * A request that passed identification and admission, as every surface's last step receives it:
 * who sent it, the limiter's decision on it, and its own services (statements counted).
 */
export interface AdmittedRequest {
  readonly requestId: string;
  readonly caller: Caller;
  readonly identity: string;
  readonly decision?: Decision;
  readonly services: Services;
  /** The request's trace, when its sampler kept it. */
  readonly trace?: Trace;
  /** Gives back the count admission took, and rewrites the rate-limit headers: the request is answered 304. */
  readonly refund: () => Promise<void>;
}
