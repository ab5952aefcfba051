import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ApolloServer, HeaderMap, type HTTPGraphQLResponse } from '@apollo/server';
import type { GraphQLError } from 'graphql';
import { MAX_BODY_BYTES } from '../common/bounds';
import type { TrustedDocumentsOnly } from '../config';
import { type Context, createContext } from '../context';
import { formatGraphQLError } from '../format-error';
import { MAX_NESTING, nestsDeeperThan, tooDeeplyNested } from '../graphql/nesting-limit';
import { NOT_STORED_HEADER, type PersistedQueryRegistrations } from '../graphql/apq-registrations';
import { getWithoutHash, isObject, postWithoutHash, registrationIn, resolveGetDocument, resolvePostDocument, restrictedToTrusted } from '../graphql/persisted-documents';
import type { PreparedDocuments } from '../graphql/prepared-documents';
import type { TrustedDocuments } from '../graphql/trusted-documents';
import { preferredType, refuseUnlessJson } from '../http/media-types';
import { parseJsonBody, readBody } from '../http/read-body';
import type { RequestState } from '../http/request-log';
import { writeCacheable } from '../http/conditional';
import { writeJson } from '../http/respond';
import type { Logger } from '../logger';
import { methodNotAllowed, notAcceptable } from '../refusals';
import type { AdmittedRequest } from './admitted-request';
import { GRAPHQL_PATH } from '../graphql/endpoints';

const RESPONSE_TYPES = ['application/graphql-response+json', 'application/json'];
/** What most clients send, accepted without parsing the header. */
const PLAIN_ACCEPTS = new Set([undefined, '*/*', 'application/json', 'application/graphql-response+json, application/json']);
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);
const NAMED_OPERATION = /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]{0,63})/;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/** The manifest's documents and who may send only those (docs/contract.md §8). */
export interface TrustedDocumentsPolicy {
  documents?: TrustedDocuments;
  only: TrustedDocumentsOnly;
}

export interface GraphQLHttpDeps {
  apollo: ApolloServer<Context>;
  prepared: PreparedDocuments;
  trusted: TrustedDocumentsPolicy;
  registrations: PersistedQueryRegistrations;
  logger: Logger;
}

/**
 * GraphQL over HTTP on `/graphql`, for an admitted request: every GraphQL-over-HTTP decision the
 * gateway makes itself, then Apollo Server's `executeHTTPGraphQLRequest`. GET for queries, POST with a JSON body for everything, and a response type the client
 * accepts: refused before execution, so that a mutation never runs for a client that cannot read
 * the answer. Refusals are thrown as ApiError for the caller's one writer.
 */
export function graphqlOverHttp({ apollo, prepared, trusted, registrations, logger }: GraphQLHttpDeps) {
  return async (req: IncomingMessage, res: ServerResponse, search: string, request: AdmittedRequest, state: RequestState): Promise<void> => {
    const method = req.method;
    if (method !== 'GET' && method !== 'POST') {
      throw methodNotAllowed(method, GRAPHQL_PATH, ['GET', 'POST']);
    }
    // A browser's GET (HTML preferred) never comes here: the pipeline gave it the explorer's page.
    const accept = req.headers.accept;
    if (!PLAIN_ACCEPTS.has(accept) && !preferredType(accept ?? '', RESPONSE_TYPES)) throw notAcceptable(RESPONSE_TYPES);
    const restricted = restrictedToTrusted(trusted.only, request.caller);
    let body: unknown;
    let query: unknown;
    let operationName: unknown;
    if (method === 'POST') {
      const contentType = req.headers['content-type'];
      if (contentType === undefined || !PLAIN_JSON.has(contentType)) refuseUnlessJson(contentType, GRAPHQL_PATH);
      body = parseJsonBody(await readBody(req, MAX_BODY_BYTES));
      if (isObject(body)) {
        body = resolvePostDocument(body, trusted.documents, restricted);
        ({ query, operationName } = body as { query?: unknown; operationName?: unknown });
      }
    } else {
      search = resolveGetDocument(search, trusted.documents, restricted);
      const params = new URLSearchParams(search);
      query = params.get('query') ?? undefined;
      operationName = params.get('operationName') ?? undefined;
    }
    state.operation = operationLabel(operationName, query);
    if (typeof query === 'string') {
      if (nestsDeeperThan(query, MAX_NESTING)) throw tooDeeplyNested();
      // Decided before Apollo runs: a document graphql-js cannot validate as sent goes in prepared.
      const invalid = prepared.prepare(query);
      if (invalid?.length) return writeValidationErrors(res, invalid);
      const registration = registrationIn(method === 'POST' ? { body } : { search });
      const notStored = registration && (await registrations.check(request.caller, registration));
      if (notStored) {
        // Run without the hash, so Apollo does not store it; the header says why.
        if (method === 'POST') body = postWithoutHash(body as Record<string, unknown>);
        else search = getWithoutHash(search);
        res.setHeader(NOT_STORED_HEADER, notStored);
      }
    }
    const headers = new HeaderMap();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const contextValue = createContext(request.caller, request.services, request.decision, request.trace);
    const response = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest: { method, headers, search, body }, context: () => Promise.resolve(contextValue) });
    if (response.body.kind !== 'complete') return writeIncremental(res, response, response.body.asyncIterator);
    // A query's whole answer over GET that graphql/cache-policy.plugin said may be kept: tagged, and 304 when it matches.
    const cacheControl = method === 'GET' && (response.status ?? 200) === 200 ? response.headers.get('cache-control') : undefined;
    const type = response.headers.get('content-type');
    if (cacheControl === undefined || type === undefined) return writeComplete(res, response, response.body.string);
    writeHead(res, response);
    await writeCacheable(res, { type, body: response.body.string, cacheControl, vary: ['Accept'] }, request.refund);
  };

  /** A prepared document's validation errors, as Apollo would send its own: 400, through the one formatter. */
  function writeValidationErrors(res: ServerResponse, errors: readonly GraphQLError[]): void {
    const formatted = errors.map((error) => formatGraphQLError(error, logger, { ...error.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
    writeJson(res, 400, { errors: formatted });
  }
}

/**
 * The operation a request ran, for the metrics and the log: its name (`anonymous` when it has
 * none). Names come from clients, so the metrics layer still bounds how many it keeps.
 */
function operationLabel(operationName: unknown, query: unknown): string {
  if (typeof operationName === 'string' && OPERATION_NAME.test(operationName)) return operationName;
  return (typeof query === 'string' && NAMED_OPERATION.exec(query)?.[1]) || 'anonymous';
}

/** Apollo's status and headers. */
function writeHead(res: ServerResponse, response: HTTPGraphQLResponse): void {
  res.statusCode = response.status ?? 200;
  for (const [name, value] of response.headers) res.setHeader(name, value);
}

/** Apollo's whole answer; text without a charset is said to be UTF-8. */
function writeComplete(res: ServerResponse, response: HTTPGraphQLResponse, body: string): void {
  writeHead(res, response);
  const type = response.headers.get('content-type');
  if (type !== undefined && !type.includes('charset')) res.setHeader('content-type', `${type}; charset=utf-8`);
  // Node sends the Content-Length of a body given whole to `end`.
  res.end(body);
}

/** Apollo's answer in parts as it streams them (incremental delivery, multipart/mixed). */
async function writeIncremental(res: ServerResponse, response: HTTPGraphQLResponse, parts: AsyncIterableIterator<string>): Promise<void> {
  writeHead(res, response);
  for await (const part of parts) res.write(part);
  res.end();
}
