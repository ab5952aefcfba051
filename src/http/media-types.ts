import contentType from 'content-type';
import Negotiator from 'negotiator';
import type { ApiError } from '../errors';
import { jsonBodyRequired, malformedHeader, unsupportedCharset } from '../refusals';

/** One parameter of a media type, its value a token or a quoted string (RFC 9110 §5.6.6). */
const PARAMETER = /;\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;\s]*)/g;

/**
 * The candidate media type an Accept header prefers, as Negotiator chooses (Apollo Server asks it
 * too): the most specific range matching each candidate gives its quality, the highest quality
 * wins. Undefined when the header accepts none of them (`text/json` is not `application/json`).
 */
export function preferredType(accept: string, candidates: readonly string[]): string | undefined {
  return new Negotiator({ headers: { accept } }).mediaType([...candidates]);
}

/** The types Apollo Server answers one GraphQL result in, in its order of preference. */
const SINGLE_RESULT_TYPES = ['application/json; charset=utf-8', 'application/graphql-response+json; charset=utf-8', 'application/json; callbackSpec=1.0; charset=utf-8'];
/** Accept headers whose choice is kept: clients send a handful of values; more are negotiated afresh. */
const KEPT_ACCEPTS = 64;
const singleResultTypes = new Map<string, string | undefined>();

/**
 * The Content-Type Apollo Server gives one GraphQL result for this Accept header (JSON when there
 * is none), chosen as it chooses, once per header value rather than by a Negotiator per request.
 * Undefined when the header accepts none of them: Apollo then refuses with 406.
 */
export function singleResultType(accept: string | undefined): string | undefined {
  if (!accept) return SINGLE_RESULT_TYPES[0];
  if (singleResultTypes.has(accept)) return singleResultTypes.get(accept);
  const type = preferredType(accept, SINGLE_RESULT_TYPES);
  if (singleResultTypes.size < KEPT_ACCEPTS) singleResultTypes.set(accept, type);
  return type;
}

/**
 * A body's Content-Type must be `application/json` in UTF-8 (docs/contract.md §6): another type
 * or charset is 415; a header that does not parse, or names a parameter twice
 * (`charset=utf-8; charset=utf-16`), is malformed: 400. `path` names who takes JSON.
 */
export function refuseUnlessJson(header: string | undefined, path: string): void {
  const refusal = jsonBodyRefusal(header, path);
  if (refusal) throw refusal;
}

function jsonBodyRefusal(header: string | undefined, path: string): ApiError | undefined {
  if (header === undefined) return jsonBodyRequired(path);
  // RFC 9110 allows empty parameters ("application/json;"); content-type (RFC 7231) does not.
  const normalised = header.replace(/;\s*(?=;|$)/g, '');
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(normalised);
  } catch {
    return malformedHeader('Content-Type', 'is malformed', header);
  }
  const names = [...normalised.matchAll(PARAMETER)].map(([, name]) => name.toLowerCase());
  if (new Set(names).size !== names.length) return malformedHeader('Content-Type', 'names a parameter twice', header);
  if (parsed.type !== 'application/json') return jsonBodyRequired(path);
  const charset = parsed.parameters.charset;
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') return unsupportedCharset();
  return undefined;
}
