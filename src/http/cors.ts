import type { IncomingMessage, ServerResponse } from 'node:http';

export interface CorsPolicy {
  origins: readonly string[];
  allowedHeaders: readonly string[];
  exposedHeaders: readonly string[];
  maxAgeSeconds: number;
}

const ALLOWED_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE';

/**
 * CORS as the `cors` package answers it with a list of origins: an allowed Origin is reflected
 * (with `Vary: Origin` always), and any OPTIONS request is a preflight answered 204 here. The
 * exposed headers go with an allowed Origin only: a browser reads them from no other response,
 * and a client that is not a browser would be sent them on every answer. Returns true when it answered.
 */
export function cors(policy: CorsPolicy) {
  const allowed = new Set(policy.origins);
  const allowHeaders = policy.allowedHeaders.join(',');
  const exposeHeaders = policy.exposedHeaders.join(',');
  const maxAge = String(policy.maxAgeSeconds);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const origin = req.headers.origin;
    const crossOrigin = origin !== undefined && allowed.has(origin);
    if (crossOrigin) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', exposeHeaders);
    }
    res.setHeader('Vary', 'Origin');
    if (req.method !== 'OPTIONS') return false;
    res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
    res.setHeader('Access-Control-Allow-Headers', allowHeaders);
    res.setHeader('Access-Control-Max-Age', maxAge);
    res.statusCode = 204;
    res.setHeader('Content-Length', '0');
    res.end();
    return true;
  };
}
