import { type RequestHandler, Router } from 'express';
import { callerOf } from '../auth/request';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_REST_OFFSET } from '../common/bounds';
import { parseId } from '../common/id.scalar';
import type { Config } from '../config';
import { servicesOf } from '../context';
import { ApiError, notFound } from '../errors';
import { orderScopeOf } from '../store/order-scope';
import { PETS_DEPRECATED_AT, deprecated } from './deprecation';
import { buildOpenApiDocument } from './openapi';
import { booleanParam, idParam, integerParam } from './query-params';
import { restOrder, restPet } from './serialize';

/** REST answers JSON only. */
const acceptsJson: RequestHandler = (req, _res, next) => {
  if (!req.accepts('application/json')) throw new ApiError('NOT_ACCEPTABLE', 'Accept must allow application/json');
  next();
};

/** A known path asked with a method it does not serve. */
const methodNotAllowed =
  (allow: string): RequestHandler =>
  (req) => {
    throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported on ${req.path}; use ${allow}`, { Allow: allow });
  };

/**
 * The legacy REST surface: thin adapters over the services the resolvers call, answering every
 * error with the Error object.
 */
export function restRoutes(config: Pick<Config, 'petsSunset'>): Router {
  const openApi = buildOpenApiDocument(config);
  const router = Router();

  router
    .route('/pets/:petId')
    .get(acceptsJson, deprecated('GET /pets/{petId}', PETS_DEPRECATED_AT, config.petsSunset), async (req, res) => {
      const id = parseId(req.params.petId, 'petId');
      const [pet] = await servicesOf(req).pets.findByIds([id]);
      if (!pet) throw notFound(`Pet ${id}`);
      res.json(restPet(pet));
    })
    .all(methodNotAllowed('GET, HEAD'));

  router
    .route('/store/orders')
    .get(acceptsJson, async (req, res) => {
      const scope = orderScopeOf(callerOf(req));
      const filter = { complete: booleanParam(req, 'complete'), petId: idParam(req, 'petId') };
      const limit = integerParam(req, 'limit', { min: 1, max: MAX_PAGE_SIZE, fallback: DEFAULT_PAGE_SIZE });
      const offset = integerParam(req, 'offset', { min: 0, max: MAX_REST_OFFSET, fallback: 0 });
      const { orders, total } = await servicesOf(req).orders.slice(scope, filter, { limit, offset });
      res.set('X-Total-Count', String(total)).json(orders.map(restOrder));
    })
    .all(methodNotAllowed('GET, HEAD'));

  router
    .route('/openapi.json')
    .get((_req, res) => {
      res.json(openApi);
    })
    .all(methodNotAllowed('GET, HEAD'));

  return router;
}
