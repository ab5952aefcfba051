import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Caller } from '../auth/caller';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_REST_OFFSET } from '../common/bounds';
import { parseId } from '../common/id.scalar';
import type { Config } from '../config';
import type { Services } from '../context';
import { ApiError, notFound } from '../errors';
import { methodNotAllowed, notAcceptable } from '../refusals';
import { preferredType } from '../http/media-types';
import { cacheControlOf, type NotModifiedHook, writeCacheable } from '../http/conditional';
import { JSON_TYPE, setHeaders, writeJson } from '../http/respond';
import { orderScopeOf } from '../store/order-scope';
import { PETS_DEPRECATED_AT, deprecation } from './deprecation';
import { buildOpenApiDocument } from './openapi';
import { booleanParam, idParam, integerParam } from './query-params';
import { restOrder, restPet } from './serialize';

/** What a route needs of its request: who sent it, the services as this request uses them, and how a 304 gives back its count. */
export interface RestRequest {
  caller: Caller;
  services: Services;
  refund: NotModifiedHook;
}

interface RestCall {
  req: IncomingMessage;
  res: ServerResponse;
  /** The query string with its `?`, or empty. */
  search: string;
  request: RestRequest;
}

interface Route {
  /** Matches the path; its one group is the path parameter. */
  path: RegExp;
  /** The operation label of the metrics and the log line. */
  operation: string;
  get(call: RestCall, param: string | undefined): Promise<void> | void;
}

/** A matched route: its metrics label, and how to serve the request. */
export interface RestRoute {
  operation: string;
  serve(call: RestCall): Promise<void> | void;
}

/** REST answers JSON only. */
function requireJson(req: IncomingMessage): void {
  if (!preferredType(req.headers.accept ?? '*/*', ['application/json'])) throw notAcceptable(['application/json']);
}

/** A path parameter as sent, percent-decoded; one that does not decode is a malformed request. */
function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError('BAD_REQUEST', 'The request is malformed');
  }
}

/**
 * The legacy REST surface: thin adapters over the services the resolvers call. Paths match as
 * they always have (any case, an optional trailing slash); GET serves HEAD; any other method
 * is 405 with Allow. `match` answers undefined for a path that is not a route.
 */
export function restRoutes(config: Pick<Config, 'petsSunset'>): { match(path: string, method: string): RestRoute | undefined } {
  const openApi = buildOpenApiDocument(config);
  const pets = deprecation('GET /pets/{petId}', PETS_DEPRECATED_AT, config.petsSunset);
  const routes: Route[] = [
    {
      path: /^\/pets\/([^/]+)\/?$/i,
      operation: 'GET /pets/{petId}',
      async get({ req, res, request }, raw) {
        requireJson(req);
        setHeaders(res, pets.headers);
        pets.check();
        const id = parseId(decodeParam(raw ?? ''), 'petId');
        const [pet] = await request.services.pets.findByIds([id]);
        if (!pet) throw notFound(`Pet ${id}`);
        // The pet reads the same for everyone; an answer to a key is still the key's own to keep.
        const cacheControl = cacheControlOf(request.caller.kind === 'key' ? 'private' : 'public');
        await writeCacheable(res, { type: JSON_TYPE, body: JSON.stringify(restPet(pet)), cacheControl }, request.refund);
      },
    },
    {
      path: /^\/store\/orders\/?$/i,
      operation: 'GET /store/orders',
      async get({ req, res, search, request }) {
        requireJson(req);
        const query = parseQuery(search.slice(1));
        const scope = orderScopeOf(request.caller);
        const filter = { complete: booleanParam(query, 'complete'), petId: idParam(query, 'petId') };
        const limit = integerParam(query, 'limit', { min: 1, max: MAX_PAGE_SIZE, fallback: DEFAULT_PAGE_SIZE });
        const offset = integerParam(query, 'offset', { min: 0, max: MAX_REST_OFFSET, fallback: 0 });
        const { orders, total } = await request.services.orders.slice(scope, filter, { limit, offset });
        const tagged = { 'X-Total-Count': String(total) };
        await writeCacheable(res, { type: JSON_TYPE, body: JSON.stringify(orders.map(restOrder)), cacheControl: cacheControlOf('private'), tagged }, request.refund);
      },
    },
    {
      path: /^\/openapi\.json\/?$/i,
      operation: 'GET /openapi.json',
      get({ res }) {
        writeJson(res, 200, openApi);
      },
    },
  ];
  return {
    match(path, method) {
      for (const route of routes) {
        const matched = route.path.exec(path);
        if (!matched) continue;
        if (method === 'GET' || method === 'HEAD') return { operation: route.operation, serve: (call) => route.get(call, matched[1]) };
        return {
          operation: 'other',
          serve() {
            throw methodNotAllowed(method, path, ['GET', 'HEAD']);
          },
        };
      }
      return undefined;
    },
  };
}
