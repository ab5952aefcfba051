import { type Context, context } from '@opentelemetry/api';

/** The trace each pg connection's statements belong to while a traced request holds it. */
const held = new WeakMap<object, Context>();

/** Statements sent on `connection` are children of `parent` until the returned function is called. */
export function holdConnection(connection: object, parent: Context): () => void {
  held.set(connection, parent);
  return () => {
    if (held.get(connection) === parent) held.delete(connection);
  };
}

type Query = (this: object, ...args: unknown[]) => unknown;

/**
 * Puts `Client#query`, as the pg instrumentation wrapped it, inside the context of the trace that
 * holds the connection: the instrumentation reads `context.active()` at the call, and the gateway
 * carries no context across the awaits before it. A connection no traced request holds sends its
 * statement as it would, and the instrumentation, finding no parent, makes no span.
 */
export function enterHeldConnections(client: { prototype: { query: Query } }): void {
  const instrumented = client.prototype.query;
  client.prototype.query = function query(this: object, ...args: unknown[]) {
    const parent = held.get(this);
    return parent === undefined ? instrumented.apply(this, args) : context.with(parent, instrumented, this, ...args);
  };
}
