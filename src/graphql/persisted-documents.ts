import type { Caller } from '../auth/caller';
import { ApiKeyRole } from '../auth/role';
import type { TrustedDocumentsOnly } from '../config';
import { ApiError } from '../errors';
import { documentHash } from './document-caches';
import type { TrustedDocument, TrustedDocuments } from './trusted-documents';

/** What a GraphQL-over-HTTP request says about its document, from a GET's query string or a POST's body. */
export interface DocumentParams {
  query?: unknown;
  /** The GraphQL-over-HTTP persisted-documents draft: "sha256:<hex>". */
  documentId?: unknown;
  /** Apollo's automatic persisted query hash, `extensions.persistedQuery.sha256Hash`. */
  apolloHash?: unknown;
}

/** Run the request as it came, or with the text of a trusted document in place of its id or hash. */
export type DocumentDecision = { kind: 'as-sent' } | { kind: 'trusted'; document: TrustedDocument };

const DOCUMENT_ID = /^sha256:([0-9a-f]{64})$/;
/** Apollo's hash is bare hex; GraphQL Code Generator's `__meta__.hash` carries the prefix. */
const APOLLO_HASH = /^(?:sha256:)?([0-9a-f]{64})$/;

/** Whether `caller` may send only trusted documents under TRUSTED_DOCUMENTS_ONLY=`only`. Admin keys never are. */
export function restrictedToTrusted(only: TrustedDocumentsOnly, caller: Caller): boolean {
  if (only === 'off') return false;
  if (caller.kind === 'anonymous') return only !== 'keys';
  return caller.key.role !== ApiKeyRole.ADMIN && only !== 'anonymous';
}

/**
 * Which document a request runs (docs/contract.md §8): a `documentId` must name a trusted
 * document (else 404 PERSISTED_DOCUMENT_NOT_FOUND); an Apollo hash the manifest has runs that
 * document, any other goes on to Apollo's automatic persisted queries. A caller restricted to
 * trusted documents gets 403 PERSISTED_DOCUMENT_REQUIRED for any document the manifest lacks.
 */
export function decideDocument(params: DocumentParams, trusted: TrustedDocuments | undefined, restricted: boolean): DocumentDecision {
  if (params.documentId !== undefined) {
    const hash = typeof params.documentId === 'string' ? DOCUMENT_ID.exec(params.documentId)?.[1] : undefined;
    if (hash === undefined) throw new ApiError('BAD_REQUEST', `documentId must be "sha256:" followed by 64 lower-case hex digits`);
    if (params.query !== undefined) throw new ApiError('BAD_REQUEST', 'Send either a query or a documentId, not both');
    const document = trusted?.find(hash);
    if (!document) throw new ApiError('PERSISTED_DOCUMENT_NOT_FOUND', `No trusted document has the id sha256:${hash}`);
    return { kind: 'trusted', document };
  }
  const hash = typeof params.apolloHash === 'string' ? APOLLO_HASH.exec(params.apolloHash)?.[1] : undefined;
  const byHash = hash === undefined ? undefined : trusted?.find(hash);
  if (byHash && params.query === undefined) return { kind: 'trusted', document: byHash };
  // No document at all is Apollo's to answer: 400 for a missing query.
  if (!restricted || (params.query === undefined && params.apolloHash === undefined)) return { kind: 'as-sent' };
  // A trusted document's full text is still that document.
  if (typeof params.query === 'string' && trusted?.find(documentHash(params.query))) return { kind: 'as-sent' };
  throw new ApiError('PERSISTED_DOCUMENT_REQUIRED', 'This API accepts only its trusted documents from this caller: send a documentId (or its persisted-query hash)');
}

/**
 * The step in front of Apollo: a POST body with a `documentId` or trusted hash gets the manifest's
 * text in their place; another document from a restricted caller is refused. Apollo then finds
 * the document already parsed and validated in its store (TrustedDocuments.documentStore).
 */
export function resolvePostDocument(body: Record<string, unknown>, trusted: TrustedDocuments | undefined, restricted: boolean): Record<string, unknown> {
  const decision = decideDocument(postParams(body), trusted, restricted);
  return decision.kind === 'trusted' ? replacePostDocument(body, decision.document.source) : body;
}

/** The same for a GET's query string (`search`, with or without its `?`): the search Apollo is to read. */
export function resolveGetDocument(search: string, trusted: TrustedDocuments | undefined, restricted: boolean): string {
  const params = new URLSearchParams(search);
  const decision = decideDocument(getParams(params), trusted, restricted);
  if (decision.kind !== 'trusted') return search;
  replaceGetDocument(params, decision.document.source);
  return `?${params.toString()}`;
}

function getParams(search: URLSearchParams): DocumentParams {
  return { query: search.get('query') ?? undefined, documentId: search.get('documentId') ?? undefined, apolloHash: apolloHashOf(parseJson(search.get('extensions'))) };
}

function postParams(body: Record<string, unknown>): DocumentParams {
  return { query: body.query, documentId: body.documentId, apolloHash: apolloHashOf(body.extensions) };
}

function replaceGetDocument(search: URLSearchParams, source: string): void {
  search.delete('documentId');
  search.set('query', source);
  dropGetHash(search);
}

function replacePostDocument(body: Record<string, unknown>, source: string): Record<string, unknown> {
  const { documentId: _id, ...rest } = body;
  return { ...postWithoutHash(rest), query: source };
}

/** A document sent with Apollo's hash of it: a registration of an automatic persisted query, unless already stored. */
export interface Registration {
  query: string;
  hash: string;
}

/** The registration a POST body or a GET's query string carries; a hash that is not the text's is Apollo's to refuse. */
export function registrationIn(request: { body: unknown } | { search: string }): Registration | undefined {
  const params = 'search' in request ? getParams(new URLSearchParams(request.search)) : isObject(request.body) ? postParams(request.body) : {};
  const { query, apolloHash } = params;
  return typeof query === 'string' && typeof apolloHash === 'string' && apolloHash === documentHash(query) ? { query, hash: apolloHash } : undefined;
}

/** A POST body without Apollo's hash: Apollo then runs the document without storing it. */
export function postWithoutHash(body: Record<string, unknown>): Record<string, unknown> {
  const { extensions, ...rest } = body;
  const kept = withoutPersistedQuery(extensions);
  return { ...rest, ...(kept === undefined ? {} : { extensions: kept }) };
}

/** The same for a GET's query string. */
export function getWithoutHash(search: string): string {
  const params = new URLSearchParams(search);
  dropGetHash(params);
  return `?${params.toString()}`;
}

function dropGetHash(search: URLSearchParams): void {
  const extensions = withoutPersistedQuery(parseJson(search.get('extensions')));
  if (extensions === undefined) search.delete('extensions');
  else search.set('extensions', JSON.stringify(extensions));
}

/** The hash has served its purpose: Apollo would otherwise store the document as a persisted query too. */
function withoutPersistedQuery(extensions: unknown): unknown {
  if (!isObject(extensions)) return extensions;
  const { persistedQuery: _hash, ...rest } = extensions;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function apolloHashOf(extensions: unknown): unknown {
  return isObject(extensions) && isObject(extensions.persistedQuery) ? extensions.persistedQuery.sha256Hash : undefined;
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // Apollo refuses malformed extensions itself
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
