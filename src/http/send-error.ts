import type { Request, Response } from 'express';
import type { ErrorBody } from '../errors';

/** The GraphQL endpoint answers errors as a GraphQL response; every other path as the Error object. */
export function isGraphQLPath(req: Request): boolean {
  const path = req.originalUrl.split('?', 1)[0];
  return path === '/graphql' || path === '/graphql/';
}

export function sendError(req: Request, res: Response, body: ErrorBody, headers: Record<string, string> = {}): void {
  res.set(headers);
  res.status(body.status);
  if (isGraphQLPath(req)) {
    res.json({ errors: [{ message: body.message, extensions: { code: body.code, status: body.status } }] });
  } else {
    res.json({ code: body.code, message: body.message, status: body.status });
  }
}
