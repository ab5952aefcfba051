import type { IncomingMessage, ServerResponse } from 'node:http';
import { Scope } from '../common/scope';
import { currentTrace } from '../telemetry/index';

/**
 * The scope of one HTTP request, from the moment it arrives: aborted when its client goes before
 * the response is sent (the connection closed or reset, the body cut off), ended when the response
 * closes, however it closes, or when its connection does. Made in the request listener's first,
 * synchronous step, where the request's trace (when tracing keeps it) is the active one.
 */
export function requestScope(req: IncomingMessage, res: ServerResponse): Scope {
  const scope = new Scope();
  scope.trace = currentTrace();
  const { socket } = req;
  const end = () => {
    socket.off('close', end);
    if (!res.writableFinished) scope.abort();
    scope.end();
  };
  res.once('close', end);
  // A response queued behind another on a pipelined connection hears nothing of the connection's
  // end: the connection's own close ends it (`end` may then run twice; the scope ends once).
  if (!res.socket) socket.once('close', end);
  // A body cut off (a reset, a dropped connection) ends the request before any answer is sent.
  req.once('close', () => {
    if (!req.complete) scope.abort();
  });
  return scope;
}
