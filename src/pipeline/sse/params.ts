import type { IncomingMessage } from 'node:http';
import { MAX_BODY_BYTES } from '../../common/bounds';
import { ApiError } from '../../errors';
import { refuseUnlessJson } from '../../http/media-types';
import { parseJsonBody, readBody } from '../../http/read-body';
import type { SubscriptionRequest } from '../subscription/prepare';

/**
 * The GraphQL parameters of a subscription stream, as the GraphQL-over-HTTP spec sends them:
 * a JSON body on POST (what graphql-sse's client sends), the search parameters on GET (what a
 * browser's EventSource can send). Anything else is 400 BAD_REQUEST (415 for another body type).
 */
export async function streamParams(req: IncomingMessage, search: string): Promise<SubscriptionRequest> {
  let params: Record<string, unknown>;
  if (req.method === 'POST') {
    refuseUnlessJson(req.headers['content-type'], '/graphql/stream');
    const body = parseJsonBody(await readBody(req, MAX_BODY_BYTES));
    if (Array.isArray(body)) throw new ApiError('BAD_REQUEST', 'Send one subscription per stream, not a batch');
    params = body as Record<string, unknown>;
  } else {
    const found = new URLSearchParams(search);
    params = { query: found.get('query') ?? undefined, operationName: found.get('operationName') ?? undefined };
    const variables = found.get('variables');
    if (variables !== null) params.variables = parseJsonParam(variables, 'variables');
  }
  const { query, operationName, variables } = params;
  if (typeof query !== 'string') throw new ApiError('BAD_REQUEST', 'The request has no query string');
  if (operationName != null && typeof operationName !== 'string') throw new ApiError('BAD_REQUEST', 'operationName must be a string');
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) throw new ApiError('BAD_REQUEST', 'variables must be an object');
  return { query, operationName, variables: variables as Record<string, unknown> | null | undefined };
}

function parseJsonParam(text: string, name: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError('BAD_REQUEST', `The ${name} parameter is not valid JSON`);
  }
}
