import { DEFAULT_PAGE_SIZE, DESCRIPTION_MAX, MAX_ORDER_QUANTITY, MAX_PAGE_SIZE, MAX_REST_OFFSET, MAX_STOCK, NAME_MAX } from '../common/bounds';
import type { Config } from '../config';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import { PETS_DEPRECATED_AT } from './deprecation';

const header = (description: string, schema: object) => ({ description, schema });

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': header('Requests allowed in the window that runs out first (on a 429: the window that refused).', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in that window.', { type: 'integer' }),
  'X-RateLimit-Reset': header('When that window frees, in Unix seconds.', { type: 'integer' }),
  'RateLimit-Policy': header('Both windows (draft-ietf-httpapi-ratelimit-headers), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.', { type: 'string' }),
  RateLimit: header('Both windows now: `r` remaining, `t` seconds to reset, e.g. `"minute";r=59;t=42, "day";r=999;t=50000`.', { type: 'string' }),
};

const RETRY_AFTER = { 'Retry-After': header('Whole seconds until the window frees, or the ban ends.', { type: 'integer' }) };

const DEPRECATION_HEADERS = {
  Deprecation: header('RFC 9745: when this operation was deprecated, as `@<Unix seconds>`.', {
    type: 'string',
    example: `@${PETS_DEPRECATED_AT.getTime() / 1000}`,
  }),
  Sunset: header('RFC 8594: when this operation stops answering (an HTTP-date).', { type: 'string' }),
  Link: header('The successor: `</graphql>; rel="successor-version"`.', { type: 'string' }),
};

function errorResponse(description: string, codes: ErrorCode[], headers: object = {}) {
  return {
    description: `${description} (${codes.join(', ')})`,
    headers: { ...RATE_LIMIT_HEADERS, ...headers },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { code: codes[0], message: description, status: ERROR_STATUS[codes[0]] },
      },
    },
  };
}

/** Responses every REST operation may give besides its own. */
const COMMON_ERRORS = {
  '401': errorResponse('The X-API-Key header names no valid key', ['INVALID_API_KEY', 'UNAUTHENTICATED']),
  '403': errorResponse('Banned for sending while rate limited', ['API_KEY_BANNED', 'CLIENT_BANNED'], RETRY_AFTER),
  '406': errorResponse('The Accept header does not allow application/json', ['NOT_ACCEPTABLE']),
  '429': errorResponse('Rate limited', ['RATE_LIMITED'], RETRY_AFTER),
  '500': errorResponse('Internal server error', ['INTERNAL_SERVER_ERROR']),
  '503': errorResponse('The database is unavailable; retry shortly', ['SERVICE_UNAVAILABLE'], RETRY_AFTER),
};

const id = (description: string) => ({ type: 'integer', format: 'int64', minimum: 1, description });

const SCHEMAS = {
  PetStatus: { type: 'string', enum: ['available', 'pending', 'sold'], description: 'Status of a pet or of its stock.' },
  NewPet: {
    type: 'object',
    required: ['name', 'categoryId'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: NAME_MAX, description: `The animal's name (1–${NAME_MAX} characters after trimming).` },
      categoryId: id('ID of the category the animal belongs to.'),
      status: { $ref: '#/components/schemas/PetStatus' },
    },
  },
  Pet: {
    type: 'object',
    required: ['id', 'name', 'categoryId', 'status'],
    additionalProperties: false,
    properties: {
      id: id('Unique identifier assigned on creation.'),
      name: { type: 'string', minLength: 1, maxLength: NAME_MAX, description: "The animal's name." },
      categoryId: id('ID of the category the animal belongs to.'),
      status: { $ref: '#/components/schemas/PetStatus' },
    },
  },
  Pets: { type: 'array', items: { $ref: '#/components/schemas/Pet' } },
  NewCategory: {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: NAME_MAX, description: 'The category name (a kind of animal).' },
      description: { type: 'string', maxLength: DESCRIPTION_MAX, description: 'A short description of the category.' },
    },
  },
  Category: {
    type: 'object',
    required: ['id', 'name'],
    properties: {
      id: id('Unique identifier assigned on creation.'),
      name: { type: 'string', minLength: 1, maxLength: NAME_MAX },
      description: { type: 'string', maxLength: DESCRIPTION_MAX, nullable: true },
    },
  },
  Order: {
    type: 'object',
    required: ['id', 'petId', 'quantity', 'shipDate', 'complete'],
    additionalProperties: false,
    properties: {
      id: id('Unique order identifier.'),
      petId: id('ID of the animal in this order.'),
      quantity: { type: 'integer', minimum: 1, maximum: MAX_ORDER_QUANTITY, description: 'Number of units ordered.' },
      shipDate: { type: 'string', format: 'date-time', nullable: true, description: 'Expected or actual ship date.' },
      complete: { type: 'boolean', description: 'Whether the order has been fulfilled.' },
    },
  },
  Orders: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
  InventoryItem: {
    type: 'object',
    required: ['petId', 'quantity', 'status'],
    properties: {
      petId: id('ID of the animal this entry tracks.'),
      quantity: { type: 'integer', minimum: 0, description: 'Current stock count.' },
      status: { $ref: '#/components/schemas/PetStatus' },
    },
  },
  InventoryUpdate: {
    type: 'object',
    required: ['quantity'],
    properties: { quantity: { type: 'integer', minimum: 0, maximum: MAX_STOCK, description: 'The new stock count.' } },
  },
  Error: {
    type: 'object',
    required: ['code', 'message', 'status'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', enum: Object.keys(ERROR_STATUS), description: 'A machine-readable error code.' },
      message: { type: 'string', description: 'A human-readable description of the error.' },
      status: { type: 'integer', description: 'The HTTP status code.' },
    },
  },
};

/** The OpenAPI 3.0.3 description of the REST surface, served at GET /openapi.json. */
export function buildOpenApiDocument(config: Pick<Config, 'petsSunset'>) {
  const sunset = config.petsSunset.toISOString();
  return {
    openapi: '3.0.3',
    info: {
      title: 'Pet Store REST API',
      version: '1.0.0',
      description:
        'The legacy REST paths of the pet store, kept beside the GraphQL API at /graphql. Every response carries ' +
        'the rate-limit headers; every error body is the Error object. A known path asked with another method ' +
        `answers 405 METHOD_NOT_ALLOWED with an Allow header; an unknown path 404 NOT_FOUND.`,
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'Pets', description: 'The animals of the catalogue.' },
      { name: 'Store', description: 'Orders and stock.' },
    ],
    paths: {
      '/pets/{petId}': {
        get: {
          tags: ['Pets'],
          operationId: 'getPetById',
          summary: 'Find a pet by id',
          description:
            `Deprecated since ${PETS_DEPRECATED_AT.toISOString()}; answers 410 GONE from ${sunset}. ` +
            'Use the GraphQL query `pet(id)` at /graphql instead. Anonymous callers are allowed.',
          deprecated: true,
          security: [{}, { apiKey: [] }],
          parameters: [{ name: 'petId', in: 'path', required: true, description: 'ID of the pet.', schema: id('ID of the pet.') }],
          responses: {
            '200': {
              description: 'The pet',
              headers: { ...RATE_LIMIT_HEADERS, ...DEPRECATION_HEADERS },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
            '400': errorResponse('petId is not an integer from 1 to 9223372036854775807', ['BAD_USER_INPUT']),
            '404': errorResponse('No pet has this id', ['NOT_FOUND'], DEPRECATION_HEADERS),
            '410': errorResponse(`Retired on ${sunset}; use /graphql`, ['GONE'], DEPRECATION_HEADERS),
            ...COMMON_ERRORS,
          },
        },
      },
      '/store/orders': {
        get: {
          tags: ['Store'],
          operationId: 'listOrders',
          summary: "The caller's orders, newest first",
          description: "A client key sees its own orders; an admin key sees every order. Unknown query parameters are ignored.",
          security: [{ apiKey: [] }],
          parameters: [
            { name: 'complete', in: 'query', description: 'Only complete (true) or open (false) orders.', schema: { type: 'boolean' } },
            { name: 'petId', in: 'query', description: 'Only orders for this pet.', schema: id('ID of a pet.') },
            { name: 'limit', in: 'query', description: 'How many orders to return.', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } },
            { name: 'offset', in: 'query', description: 'How many matching orders to skip.', schema: { type: 'integer', minimum: 0, maximum: MAX_REST_OFFSET, default: 0 } },
          ],
          responses: {
            '200': {
              description: 'A page of orders',
              headers: { ...RATE_LIMIT_HEADERS, 'X-Total-Count': header('How many orders match, across all pages.', { type: 'integer' }) },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Orders' } } },
            },
            '400': errorResponse('A query parameter has a value it does not take; the message names it', ['BAD_USER_INPUT']),
            ...COMMON_ERRORS,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key: `psk_` and 43 letters or digits.' },
      },
      schemas: SCHEMAS,
    },
  };
}
