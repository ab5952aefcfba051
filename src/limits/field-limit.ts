import { Directive, type MiddlewareFn, UseMiddleware } from 'type-graphql';
import { inTrace, type Trace } from '../common/trace';
import { ApiError } from '../errors';
import type { FieldLimiter } from './field-limiter';
import { identityOf, type LimitedCaller } from './identity';

/** What a resolver's context must carry for its fields to be limited. */
export interface FieldLimitContext {
  caller: LimitedCaller;
  services: { fieldLimiter: FieldLimiter };
  /** The request's trace, when it is traced: the limiter's Redis calls are its children. */
  trace?: Trace;
}

/**
 * A per-field limit (docs/contract.md §5): at most `max` calls a minute per key, refused with a field
 * error RATE_LIMITED. It shows in schema.graphql as `@rateLimit(max: …, window: "1m")`.
 */
export function FieldRateLimit(max: number): MethodDecorator {
  const directive = Directive(`@rateLimit(max: ${max}, window: "1m")`);
  const limit: MiddlewareFn<FieldLimitContext> = async ({ context, info }, next) => {
    const identity = identityOf(context.caller);
    const refusal = await inTrace(context.trace, () => context.services.fieldLimiter.limit(identity, info.fieldName, { max, windowMs: 60_000 }));
    if (refusal) throw new ApiError('RATE_LIMITED', refusal);
    return next();
  };
  const middleware = UseMiddleware(limit);
  return (target, key, descriptor) => {
    directive(target, key, descriptor);
    middleware(target, key, descriptor);
  };
}
