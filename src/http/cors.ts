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
 * (with `Vary: Origin` always), the exposed headers go on every response, and any OPTIONS request
 * is a preflight answered 204 here. Returns true when it answered.
 */
export function cors(policy: CorsPolicy) {
  const allowed = new Set(policy.origins);
  const allowHeaders = policy.allowedHeaders.join(',');
  const exposeHeaders = policy.exposedHeaders.join(',');
  const maxAge = String(policy.maxAgeSeconds);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const origin = req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    if (req.method !== 'OPTIONS') {
      res.setHeader('Access-Control-Expose-Headers', exposeHeaders);
      return false;
    }
    res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
    res.setHeader('Access-Control-Allow-Headers', allowHeaders);
    res.setHeader('Access-Control-Max-Age', maxAge);
    res.setHeader('Access-Control-Expose-Headers', exposeHeaders);
    res.statusCode = 204;
    res.setHeader('Content-Length', '0');
    res.end();
    return true;
  };
}
