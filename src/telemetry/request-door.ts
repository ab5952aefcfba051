import type { IncomingMessage } from 'node:http';
import { type Context, context } from '@opentelemetry/api';

type Emit = (this: unknown, event: string | symbol, ...args: unknown[]) => boolean;

/**
 * Puts the sampling decision in front of the HTTP instrumentation, which otherwise builds a
 * request's attributes, starts its span and binds its request and response to a context before
 * any sampler is asked. A server's `request` event goes through the instrumented `emit` when
 * `traced(request)`; any other request runs in `untraced` (tracing suppressed) through the `emit`
 * the instrumentation wrapped, as it would with tracing off. False when `prototype.emit` is not
 * the instrumentation's wrapper (nothing to go around).
 */
export function guardIncomingRequests(prototype: { emit: Emit }, traced: (request: IncomingMessage) => boolean, untraced: Context): boolean {
  const instrumented = prototype.emit;
  const bare = (instrumented as Emit & { __original?: Emit }).__original;
  if (typeof bare !== 'function') return false;
  prototype.emit = function emit(this: unknown, event, ...args) {
    if (event !== 'request') return bare.apply(this, [event, ...args]);
    if (traced(args[0] as IncomingMessage)) return instrumented.apply(this, [event, ...args]);
    return context.with(untraced, bare, this, event, ...args);
  };
  return true;
}
