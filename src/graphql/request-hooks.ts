import type { ApolloServerPlugin, BaseContext, GraphQLRequestListener } from '@apollo/server';

/** The hooks Apollo starts together for every listener of a request (Promise.all) and whose results it ignores. */
const TOGETHER = ['didResolveSource', 'didResolveOperation', 'didEncounterErrors', 'willSendResponse', 'didEncounterSubsequentErrors', 'willSendSubsequentPayload'] as const;
type Together = (typeof TOGETHER)[number];
type AnyHook = (...args: unknown[]) => Promise<unknown>;

/**
 * Request hooks that keep no state of their own: one object serves every request, so that a
 * request allocates nothing to start them. What a request's hooks must remember between stages
 * they keep beside its request context.
 */
export type SharedRequestHooks<TContext extends BaseContext> = Pick<GraphQLRequestListener<TContext>, Together>;

/**
 * The gateway's request hooks as one Apollo plugin with one listener, made once. Apollo calls
 * every listener of a request at every stage, whether it has that hook or not, so each listener
 * costs allocations on every request; merged, a stage costs one call. Each merged hook starts the
 * given ones in their order and together, as Apollo would: all start, and the first refusal is
 * the one sent.
 */
export function requestHooksPlugin<TContext extends BaseContext>(hooks: readonly SharedRequestHooks<TContext>[]): ApolloServerPlugin<TContext> {
  const merged: Partial<Record<Together, AnyHook>> = {};
  for (const name of TOGETHER) {
    const having = hooks.filter((one) => one[name] !== undefined).map((one) => (one[name] as AnyHook).bind(one));
    if (having.length === 1) merged[name] = having[0];
    else if (having.length > 1) {
      merged[name] = async (...args) => {
        await Promise.all(having.map((hook) => hook(...args)));
      };
    }
  }
  const listener = Promise.resolve(merged as GraphQLRequestListener<TContext>);
  return { requestDidStart: () => listener };
}
