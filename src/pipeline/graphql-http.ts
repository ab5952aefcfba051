import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ApolloServer, HeaderMap, type HTTPGraphQLResponse } from '@apollo/server';
import { MAX_BODY_BYTES } from '../common/bounds';
import type { TrustedDocumentsOnly } from '../config';
import { type Context, createContext } from '../context';
import { ApiError } from '../errors';
import { MAX_NESTING, nestsDeeperThan, tooDeeplyNested } from '../graphql/nesting-limit';
import { isObject, resolveGetDocument, resolvePostDocument, restrictedToTrusted } from '../graphql/persisted-documents';
import { PreparedDocuments } from '../graphql/prepared-documents';
import { TOO_COMPLEX_TO_VALIDATE } from '../graphql/format-error';
import type { TrustedDocuments } from '../graphql/trusted-documents';
import { preferredType } from '../http/accept';
import { parseJsonBody, readBody } from '../http/read-body';
import type { RequestState } from '../http/request-log';
import { writeGraphQLErrors } from '../http/respond';
import type { AdmittedRequest } from './admitted-request';

const RESPONSE_TYPES = ['application/graphql-response+json', 'application/json'];
const BROWSER_TYPES = ['text/html', ...RESPONSE_TYPES];
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
}

/**
 * GraphQL over HTTP on `/graphql`, for an admitted request: every GraphQL-over-HTTP decision the
 * gateway makes itself, then Apollo Server's `executeHTTPGraphQLRequest`. GET for queries (and
 * the Sandbox page), POST with a JSON body for everything, and a response type the client
 * accepts: refused before execution, so that a mutation never runs for a client that cannot read
 * the answer. Refusals are thrown as ApiError for the caller's one writer.
 */
export function graphqlOverHttp({ apollo, prepared, trusted }: GraphQLHttpDeps) {
  return async (req: IncomingMessage, res: ServerResponse, search: string, request: AdmittedRequest, state: RequestState): Promise<void> => {
    const method = req.method;
    if (method !== 'GET' && method !== 'POST') {
      throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported on /graphql; use GET or POST`, { Allow: 'GET, POST' });
    }
    const accept = req.headers.accept;
    if (!PLAIN_ACCEPTS.has(accept)) {
      const browsing = method === 'GET' && preferredType(accept ?? '', BROWSER_TYPES) === 'text/html';
      if (!browsing && !preferredType(accept ?? '', RESPONSE_TYPES)) throw new ApiError('NOT_ACCEPTABLE', `Accept must allow ${RESPONSE_TYPES.join(' or ')}`);
    }
    const restricted = restrictedToTrusted(trusted.only, request.caller);
    let body: unknown;
    let query: unknown;
    let operationName: unknown;
    if (method === 'POST') {
      refuseUnlessJson(req.headers['content-type']);
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
      if (PreparedDocuments.mayHaveConditionalSubscriptionRoot(query) && !prepare(res, query)) return;
    }
    const headers = new HeaderMap();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const contextValue = createContext(request.caller, request.services, request.decision);
    const execute = () => apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest: { method, headers, search, body }, context: () => Promise.resolve(contextValue) });
    let response = await execute();
    // A document too repetitive for graphql-js to validate as sent may be valid once its exact repeats are left out.
    if (response.status === 400 && typeof query === 'string' && isTooComplexToValidate(response)) {
      if (!prepare(res, query)) return;
      response = await execute();
    }
    if (response.body.kind === 'complete') writeComplete(res, response, response.body.string);
    else await writeIncremental(res, response, response.body.asyncIterator);
  };

  /** Prepares the document for Apollo; false when it is invalid, and the errors are written. */
  function prepare(res: ServerResponse, query: string): boolean {
    const errors = prepared.prepare(query);
    if (!errors?.length) return true;
    const extensions = { code: 'GRAPHQL_VALIDATION_FAILED', status: 400 };
    writeGraphQLErrors(res, 400, errors.map(({ message, locations }) => ({ message, ...(locations && { locations }), extensions })));
    return false;
  }
}

function refuseUnlessJson(contentType: string | undefined): void {
  if (contentType !== undefined && PLAIN_JSON.has(contentType)) return;
  const [type, ...params] = (contentType ?? '').split(';');
  if (type.trim().toLowerCase() !== 'application/json') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'POST /graphql takes a JSON body: Content-Type: application/json');
  }
  const charset = params.map((param) => param.split('=')).find(([name]) => name.trim().toLowerCase() === 'charset')?.[1];
  if (charset !== undefined && charset.trim().replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body has an unsupported encoding or charset');
  }
}

function isTooComplexToValidate(response: HTTPGraphQLResponse): boolean {
  return response.body.kind === 'complete' && response.body.string.includes(TOO_COMPLEX_TO_VALIDATE.message);
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

/** Apollo's whole answer; text without a charset (the Sandbox page) is said to be UTF-8. */
function writeComplete(res: ServerResponse, response: HTTPGraphQLResponse, body: string): void {
  writeHead(res, response);
  const type = response.headers.get('content-type');
  if (type !== undefined && !type.includes('charset')) res.setHeader('content-type', `${type}; charset=utf-8`);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

/** Apollo's answer in parts as it streams them (incremental delivery, multipart/mixed). */
async function writeIncremental(res: ServerResponse, response: HTTPGraphQLResponse, parts: AsyncIterableIterator<string>): Promise<void> {
  writeHead(res, response);
  for await (const part of parts) res.write(part);
  res.end();
}
