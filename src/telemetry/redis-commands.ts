import { type Context, context, trace } from '@opentelemetry/api';

/** The context each queued Redis command was issued in, when that context holds a span. */
const issuedIn = new WeakMap<object, Context>();

/** `Redis#sendCommand(command, stream?)` and `Pipeline#sendCommand(command)`, as ioredis declares them. */
type Send = (this: object, command: object, stream?: unknown) => unknown;

/**
 * Carries the trace of a Redis command from the call that issues it to the one that sends it.
 * A command sent through a pipeline (an explicit one, or a client's auto-pipelining) is queued
 * inside a request's trace and sent with the others of its tick in a later one, where no context
 * is active. Each queued command keeps the context it was issued in, and `Redis#sendCommand` (as
 * the ioredis instrumentation wrapped it, reading `context.active()` for the span's parent) is
 * entered in it.
 * A command issued outside any span is queued and sent as it would be.
 */
export function enterQueuedCommands(ioredis: { prototype: { sendCommand: Send }; Pipeline: { prototype: { sendCommand: Send } } }): void {
  // Every command of every request goes through both: no array is made of their arguments.
  const queue = ioredis.Pipeline.prototype.sendCommand;
  ioredis.Pipeline.prototype.sendCommand = function sendCommand(this: object, command: object) {
    const active = context.active();
    if (trace.getSpan(active) !== undefined) issuedIn.set(command, active);
    return queue.call(this, command);
  };
  const send = ioredis.prototype.sendCommand;
  ioredis.prototype.sendCommand = function sendCommand(this: object, command: object, stream?: unknown) {
    const parent = typeof command === 'object' && command !== null ? issuedIn.get(command) : undefined;
    return parent === undefined ? send.call(this, command, stream) : context.with(parent, send, this, command, stream);
  };
}
