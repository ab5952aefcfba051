import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * OpenTelemetry's context held for the synchronous call of `with` only: a stack, pushed on entry
 * and popped on return, nothing carried across an await. On Node 20 an AsyncLocalStorage (the
 * SDK's own context manager) turns on promise hooks for the whole process, and every promise of
 * every request, sampled or not, then pays for them. Here a traced request carries its context
 * itself (request-trace.ts) and enters it around the calls where pg and ioredis start their spans,
 * which read `context.active()` synchronously at the call.
 *
 * `bind` wraps a function to run inside `with`; an event emitter is returned as it is, its
 * listeners unbound: patching a request's and a response's listener methods made Node's HTTP code
 * slower for every traced request, and what a listener needs of the trace it is given explicitly.
 */
export class SyncContextManager implements ContextManager {
  private readonly stack: Context[] = [];

  active(): Context {
    const { stack } = this;
    return stack.length === 0 ? ROOT_CONTEXT : stack[stack.length - 1];
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const { stack } = this;
    const depth = stack.length;
    stack.push(context);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      // Back to where this call found it, whatever a callee left pushed.
      stack.length = depth;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const enter = (self: unknown, args: unknown[]) => this.with(context, fn, self, ...args);
    return function bound(this: unknown, ...args: unknown[]) {
      return enter(this, args);
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.stack.length = 0;
    return this;
  }
}
