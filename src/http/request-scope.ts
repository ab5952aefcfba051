import type { IncomingMessage, ServerResponse } from 'node:http';
import { Scope } from '../common/scope';

/**
 * The scope of one HTTP request, from the moment it arrives: aborted when its client goes before
 * the response is sent (the connection closed or reset, the body cut off), ended when the
 * response closes, however it closes.
 */
export function requestScope(req: IncomingMessage, res: ServerResponse): Scope {
  const scope = new Scope();
  // A body cut off (a reset, a dropped connection) ends the request before any answer is sent.
  req.once('close', () => {
    if (!req.complete) scope.abort();
  });
  res.once('close', () => {
    if (!res.writableFinished) scope.abort();
    scope.end();
  });
  return scope;
}
