import type { ServerResponse } from 'node:http';

/** How long, and how many bytes of a request's body, an answer that closes the connection reads on for. */
export const LINGER_MS = 3_000;
export const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * Ends `res` with `body`. An answer that closes the connection (a 413, say) before the request's
 * body has all arrived is written at once, then the rest of the body is read and discarded, at
 * most LINGER_BYTES or LINGER_MS (nginx's lingering close), before the connection closes: a
 * socket closed with unread bytes is reset by the kernel, and a client still sending would see
 * EPIPE instead of the answer. A client waiting for 100 Continue sends no body: nothing to wait for.
 */
export function endResponse(res: ServerResponse, body?: string): void {
  const req = res.req;
  const expectsContinue = /100-continue/i.test(req?.headers.expect ?? '');
  if (!req || req.complete || expectsContinue || !/close/i.test(String(res.getHeader('Connection') ?? ''))) return void res.end(body);
  if (body !== undefined) res.write(body);
  let read = 0;
  const discard = (chunk: Buffer) => {
    read += chunk.length;
    if (read > LINGER_BYTES) close();
  };
  const close = () => {
    clearTimeout(timer);
    req.off('data', discard).off('end', close).off('error', close).off('close', close);
    res.end();
  };
  const timer = setTimeout(close, LINGER_MS).unref();
  req.on('data', discard).on('end', close).on('error', close).on('close', close);
  req.resume();
}
