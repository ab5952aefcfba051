import type { Request } from 'express';
import type { Surface } from '../ops/metrics';
import { isGraphQLPath } from './send-error';

const NAMED_OPERATION = /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]{0,63})/;
const REST_OPERATIONS = new Set(['GET /pets/{petId}', 'GET /store/orders', 'GET /openapi.json']);
const OPS_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export function surfaceOf(req: Request): Surface {
  if (isGraphQLPath(req)) return 'graphql';
  if (OPS_PATHS.has(req.path)) return 'ops';
  return req.route ? 'rest' : 'none';
}

/**
 * The operation a request ran: the GraphQL operation's name (`anonymous` when it has none), or the
 * REST route. Names come from clients, so the metrics layer still bounds how many it keeps.
 */
export function operationOf(req: Request, surface: Surface): string {
  if (surface === 'graphql') {
    const body = (req.body ?? {}) as { operationName?: unknown; query?: unknown };
    const named = typeof body.operationName === 'string' ? body.operationName : (req.query.operationName as unknown);
    if (typeof named === 'string' && /^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(named)) return named;
    const query = typeof body.query === 'string' ? body.query : req.query.query;
    return (typeof query === 'string' && NAMED_OPERATION.exec(query)?.[1]) || 'anonymous';
  }
  if (surface === 'rest') {
    const route = `${req.method === 'HEAD' ? 'GET' : req.method} ${String(req.route.path).replace(/:(\w+)/g, '{$1}')}`;
    return REST_OPERATIONS.has(route) ? route : 'other';
  }
  return surface === 'ops' ? req.path : 'none';
}
