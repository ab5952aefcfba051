import type { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type RequestHandler, Router } from 'express';
import { type Context, type Services, createContext } from '../context';
import { ApiError } from '../errors';
import '../http/request';

/** 100 KiB (API.md §6). */
export const MAX_BODY_BYTES = 102_400;

const RESPONSE_TYPES = ['application/graphql-response+json', 'application/json'];

/** GraphQL over HTTP: GET for queries, POST with a JSON body for everything. */
const allowedMethods: RequestHandler = (req, _res, next) => {
  if (req.method !== 'GET' && req.method !== 'POST') {
    throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported on /graphql; use GET or POST`, {
      Allow: 'GET, POST',
    });
  }
  next();
};

/** Refused before execution, so that a mutation never runs for a client that cannot read the answer. */
const acceptableResponse: RequestHandler = (req, _res, next) => {
  const browsing = req.method === 'GET' && req.accepts(['text/html', ...RESPONSE_TYPES]) === 'text/html';
  if (!browsing && !req.accepts(RESPONSE_TYPES)) {
    throw new ApiError('NOT_ACCEPTABLE', `Accept must allow ${RESPONSE_TYPES.join(' or ')}`);
  }
  next();
};

const jsonBody: RequestHandler = (req, _res, next) => {
  if (req.method === 'POST' && !req.is('application/json')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'POST /graphql takes a JSON body: Content-Type: application/json');
  }
  next();
};

/** Apollo refuses a missing body itself, given a `body` property to look at. */
const ensureBody: RequestHandler = (req, _res, next) => {
  if (!('body' in req)) (req as { body?: unknown }).body = undefined;
  next();
};

export function graphqlRoute(apollo: ApolloServer<Context>, services: Services): Router {
  return Router().all(
    '/',
    allowedMethods,
    acceptableResponse,
    jsonBody,
    express.json({ limit: MAX_BODY_BYTES }),
    ensureBody,
    expressMiddleware(apollo, {
      context: async ({ req }) =>
        createContext(req.caller ?? { kind: 'anonymous', address: 'unknown' }, services, req.rateLimit),
    }),
  );
}
