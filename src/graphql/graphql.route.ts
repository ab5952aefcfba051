import type { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type RequestHandler, Router } from 'express';
import type { TrustedDocumentsOnly } from '../config';
import { type Context, createContext, servicesOf } from '../context';
import { MAX_BODY_BYTES } from '../common/bounds';
import { ApiError } from '../errors';
import { callerOf } from '../auth/request';
import { refuseDeepNesting } from './nesting-limit';
import { persistedDocuments } from './persisted-documents';
import type { TrustedDocuments } from './trusted-documents';

// Re-exported for the WebSocket server, which bounds a message as this route bounds a body.
export { MAX_BODY_BYTES };

const RESPONSE_TYPES = ['application/graphql-response+json', 'application/json'];
/** What most clients send, accepted without parsing the header. */
const PLAIN_ACCEPTS = new Set([undefined, '*/*', 'application/json', 'application/graphql-response+json, application/json']);
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/**
 * GraphQL over HTTP: GET for queries, POST with a JSON body for everything, and a response type
 * the client accepts. Refused before execution, so that a mutation never runs for a client that
 * cannot read the answer.
 */
const graphqlRequest: RequestHandler = (req, _res, next) => {
  const { method } = req;
  if (method !== 'GET' && method !== 'POST') {
    throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported on /graphql; use GET or POST`, {
      Allow: 'GET, POST',
    });
  }
  const accept = req.headers.accept;
  if (!PLAIN_ACCEPTS.has(accept)) {
    const browsing = method === 'GET' && req.accepts(['text/html', ...RESPONSE_TYPES]) === 'text/html';
    if (!browsing && !req.accepts(RESPONSE_TYPES)) {
      throw new ApiError('NOT_ACCEPTABLE', `Accept must allow ${RESPONSE_TYPES.join(' or ')}`);
    }
  }
  if (method === 'POST' && !PLAIN_JSON.has(req.headers['content-type'] ?? '') && !req.is('application/json')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'POST /graphql takes a JSON body: Content-Type: application/json');
  }
  next();
};

/** Apollo refuses a missing body itself, given a `body` property to look at. */
const ensureBody: RequestHandler = (req, _res, next) => {
  if (!('body' in req)) (req as { body?: unknown }).body = undefined;
  next();
};

/** The manifest's documents and who may send only those (docs/contract.md §8). */
export interface TrustedDocumentsPolicy {
  documents?: TrustedDocuments;
  only: TrustedDocumentsOnly;
}

export function graphqlRoute(apollo: ApolloServer<Context>, trusted: TrustedDocumentsPolicy = { only: 'off' }): Router {
  return Router().all(
    '/',
    graphqlRequest,
    express.json({ limit: MAX_BODY_BYTES }),
    ensureBody,
    persistedDocuments(trusted.documents, trusted.only),
    refuseDeepNesting,
    expressMiddleware(apollo, {
      context: async ({ req }) => createContext(callerOf(req), servicesOf(req), req.rateLimit),
    }),
  );
}
