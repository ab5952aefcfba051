import request from 'supertest';

export interface GraphQLResult<T = Record<string, any>> {
  status: number;
  headers: Record<string, string>;
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions: { code: string; status: number } }[];
  body: any;
}

/** POSTs one GraphQL operation as a front end would. */
export async function gql<T = Record<string, any>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<GraphQLResult<T>> {
  const call = request(url).post('/graphql').set('Content-Type', 'application/json').set(options.headers ?? {});
  if (options.key) call.set('X-API-Key', options.key);
  const response = await call.send({ query, variables });
  return {
    status: response.status,
    headers: response.headers as Record<string, string>,
    data: response.body?.data,
    errors: response.body?.errors,
    body: response.body,
  };
}

/** The codes of a result's errors, in order. */
export const codes = (result: GraphQLResult) => (result.errors ?? []).map((error) => error.extensions.code);
