import { createHash } from 'node:crypto';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache, ServerError, gql as tag } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { ApolloServer } from '@apollo/server';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import { Kind, type DocumentNode, type OperationDefinitionNode, print } from 'graphql';
import { type Caller } from '../../src/auth/caller';
import { Plan } from '../../src/auth/plans';
import { ApiKeyRole } from '../../src/auth/role';
import { loadConfig, TRUSTED_DOCUMENTS_ONLY } from '../../src/config';
import { restrictedToTrusted } from '../../src/graphql/persisted-documents';
import { buildGatewaySchema } from '../../src/graphql/schema';
import { TrustedDocuments } from '../../src/graphql/trusted-documents';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';
import { corpusOperation, readCorpus } from './corpus';
import { type GeneratedManifest, generatePersistedDocuments, manifestEntry } from './persisted-manifest';
import { printFigure } from '../helpers/figures';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hexOf = (id: string) => id.replace(/^sha256:/, '');
const UNTRUSTED = '{ categories(first: 3) { nodes { id name } } }';

let generated: GeneratedManifest;
beforeAll(async () => {
  generated = await generatePersistedDocuments();
}, 60_000);
afterAll(() => rmSync(generated.dir, { recursive: true, force: true }));

/** Writes a manifest of `documents` beside the generated one; returns its path. */
function writeManifest(name: string, documents: string[]): string {
  const file = join(generated.dir, name);
  writeFileSync(file, JSON.stringify(Object.fromEntries(documents.map((source) => [`sha256:${sha256(source)}`, source]))));
  return file;
}

describe('the manifest GraphQL Code Generator writes', () => {
  it('holds every operation of the corpus, keyed by the sha256 of its text', () => {
    const operations = readCorpus().flatMap(({ document }) => document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION));
    const entries = Object.entries(generated.manifest);
    expect(entries).toHaveLength(operations.length);
    for (const [id, source] of entries) expect(id).toBe(`sha256:${sha256(source)}`);
    const bytes = statSync(generated.file).size;
    const schema = buildGatewaySchema();
    return schema.then((built) => {
      // Reading the file included, as start-up does it; the first load also warms the code up.
      const load = () => {
        const started = process.hrtime.bigint();
        const trusted = TrustedDocuments.load(loadConfig({ TRUSTED_DOCUMENTS: generated.file }).trustedDocuments!, built, { maxCost: 1000, introspection: true });
        return { trusted, ms: (Number(process.hrtime.bigint() - started) / 1e6).toFixed(1) };
      };
      const [first, second] = [load(), load()];
      expect(first.trusted.size).toBe(operations.length);
      printFigure(`trusted documents: manifest of ${entries.length} documents, ${bytes} bytes; read, parsed, validated and costed in ${first.ms} ms (again: ${second.ms} ms)`);
    });
  });
});

it('hands Apollo each trusted document parsed and validated at load, never parsing it again', async () => {
  // Pins what TrustedDocuments.documentStore relies on: Apollo keys its document store by the sha256 of the query text.
  const schema = await buildGatewaySchema();
  const trusted = TrustedDocuments.load(loadConfig({ TRUSTED_DOCUMENTS: generated.file }).trustedDocuments!, schema, { maxCost: 1000, introspection: true });
  const parsed: string[] = [];
  const apollo = new ApolloServer({
    schema,
    documentStore: trusted.documentStore(new InMemoryLRUCache()),
    plugins: [{ requestDidStart: async () => ({ parsingDidStart: async ({ source }) => void parsed.push(source) }) }],
  });
  await apollo.start();
  try {
    const { source } = manifestEntry(generated.manifest, 'CategoryList');
    for (const query of [source, source, UNTRUSTED, UNTRUSTED]) await apollo.executeOperation({ query, variables: { first: 1 } }, { contextValue: {} as never });
    expect(parsed).toEqual([UNTRUSTED]);
  } finally {
    await apollo.stop();
  }
});

describe('configuration', () => {
  it('names TRUSTED_DOCUMENTS when the file is missing, not JSON, not a manifest, or keyed wrongly', () => {
    const bad = (name: string, content: string) => {
      const file = join(generated.dir, name);
      writeFileSync(file, content);
      return file;
    };
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: join(generated.dir, 'missing.json') })).toThrow(/^TRUSTED_DOCUMENTS: expected a readable file .*\(ENOENT\)/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: bad('text.json', 'query {') })).toThrow(/^TRUSTED_DOCUMENTS: .*\(not JSON\)/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: bad('array.json', '["{ pets { totalCount } }"]') })).toThrow(/^TRUSTED_DOCUMENTS: expected a persisted-documents manifest/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: bad('key.json', '{"PetList": "{ pets { totalCount } }"}') })).toThrow(/^TRUSTED_DOCUMENTS: .*got ".*: PetList"/);
    const wrongHash = bad('hash.json', JSON.stringify({ [`sha256:${sha256('{ a }')}`]: '{ b }' }));
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: wrongHash })).toThrow(/^TRUSTED_DOCUMENTS: expected every key to be the sha256 of its document/);
  });

  it('takes TRUSTED_DOCUMENTS_ONLY as off, anonymous, keys or all, with a manifest', () => {
    expect(loadConfig({}).trustedDocumentsOnly).toBe('off');
    for (const only of TRUSTED_DOCUMENTS_ONLY) {
      expect(loadConfig({ TRUSTED_DOCUMENTS: generated.file, TRUSTED_DOCUMENTS_ONLY: only }).trustedDocumentsOnly).toBe(only);
    }
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: generated.file, TRUSTED_DOCUMENTS_ONLY: 'yes' })).toThrow(
      'TRUSTED_DOCUMENTS_ONLY: expected off, anonymous, keys, all or unset, got "yes"',
    );
    expect(() => loadConfig({ TRUSTED_DOCUMENTS_ONLY: 'all' })).toThrow(/^TRUSTED_DOCUMENTS: expected a manifest file when TRUSTED_DOCUMENTS_ONLY is all/);
  });

  it('restricts anonymous callers, key holders or both, never admin keys', () => {
    const key = (role: ApiKeyRole): Caller => ({ kind: 'key', address: '::1', key: { id: '1', role, plan: Plan.FREE, quota: {} as never } });
    const callers: [string, Caller][] = [
      ['anonymous', { kind: 'anonymous', address: '::1' }],
      ['client key', key(ApiKeyRole.CLIENT)],
      ['admin key', key(ApiKeyRole.ADMIN)],
    ];
    const matrix = Object.fromEntries(TRUSTED_DOCUMENTS_ONLY.map((only) => [only, callers.filter(([, caller]) => restrictedToTrusted(only, caller)).map(([name]) => name)]));
    expect(matrix).toEqual({ off: [], anonymous: ['anonymous'], keys: ['client key'], all: ['anonymous', 'client key'] });
  });
});

describe('a manifest document that may not be served stops start-up, named', () => {
  const loading = (documents: string[]) => async () =>
    TrustedDocuments.load(loadConfig({ TRUSTED_DOCUMENTS: writeManifest('refused.json', documents) }).trustedDocuments!, await buildGatewaySchema(), {
      maxCost: 1000,
      introspection: true,
    });
  const deep = `query TooDeep { pets { nodes { category { pets { nodes { category { pets { nodes { category { pets { nodes { id } } } } } } } } } } } }`;

  it('over the depth limit', async () => {
    await expect(loading([deep])()).rejects.toThrow(new RegExp(`^TRUSTED_DOCUMENTS \\(.*refused.json\\): document sha256:${sha256(deep)} \\(query TooDeep\\) is over a limit: Query depth 12 exceeds the limit of 10`));
  });

  it('over the cost limit, its required variables given sample values', async () => {
    const costly = `query Costly($id: ID!) { pet(id: $id) { id } a: pets(first: 100) { nodes { id name category { pets(first: 100) { nodes { id } } } } } }`;
    await expect(loading([costly])()).rejects.toThrow(/document sha256:[0-9a-f]{64} \(query Costly\) is over a limit: Query cost \d+ exceeds the limit of 1000/);
  });

  it('invalid against the schema', async () => {
    await expect(loading(['query Typo { pets { nodes { nmae } } }'])()).rejects.toThrow(/\(query Typo\) is not valid against the schema: Cannot query field "nmae"/);
  });

  it('through the gateway itself', async () => {
    await expect(startTestApp({ TRUSTED_DOCUMENTS: writeManifest('gateway.json', [deep]) })).rejects.toThrow(/\(query TooDeep\) is over a limit/);
  });
});

describe('serving the manifest, anonymous callers restricted to it', () => {
  let t: TestApp;
  let categoryId: string;
  let clientKey: string;
  beforeAll(async () => {
    t = await startTestApp({ TRUSTED_DOCUMENTS: generated.file, TRUSTED_DOCUMENTS_ONLY: 'anonymous' });
    categoryId = await createCategory(t, 'Hamsters');
    for (const name of ['Rocky', 'Nibbles']) await createPet(t, categoryId, name);
    clientKey = (await createApiKey(t, { plan: 'FREE' })).key;
  });
  afterAll(() => t.close());

  const post = (body: object, key?: string) =>
    fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) }, body: JSON.stringify(body) });
  const petNames = async (response: Response) => ((await response.json()) as any).data.pets.nodes.map((pet: any) => pet.name);
  const variables = () => ({ first: 10, filter: { categoryId } });

  it('runs a document named by documentId, in a POST body and in a GET query string', async () => {
    const { id } = manifestEntry(generated.manifest, 'PetList');
    const byPost = await post({ documentId: id, variables: variables() });
    expect(byPost.status).toBe(200);
    expect(await petNames(byPost)).toEqual(['Rocky', 'Nibbles']);
    const search = new URLSearchParams({ documentId: id, variables: JSON.stringify(variables()) });
    const byGet = await fetch(`${t.url}/graphql?${search}`, { headers: { 'Apollo-Require-Preflight': 'true' } });
    expect(byGet.status).toBe(200);
    expect(await petNames(byGet)).toEqual(['Rocky', 'Nibbles']);
  });

  it('runs a document named by Apollo\'s persisted-query hash, with or without the sha256: prefix', async () => {
    const { id } = manifestEntry(generated.manifest, 'PetList');
    for (const sha256Hash of [hexOf(id), id]) {
      const response = await post({ extensions: { persistedQuery: { version: 1, sha256Hash } }, variables: variables() });
      expect(response.status).toBe(200);
      expect(await petNames(response)).toEqual(['Rocky', 'Nibbles']);
    }
  });

  it('refuses any other document from an anonymous caller with 403 PERSISTED_DOCUMENT_REQUIRED, not from keys', async () => {
    const refused = await gql(t.url, UNTRUSTED);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      errors: [{ message: expect.stringContaining('trusted documents'), extensions: { code: 'PERSISTED_DOCUMENT_REQUIRED', status: 403 } }],
    });
    // An automatic persisted query is another document too, registered or not.
    const byHash = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(UNTRUSTED) } } });
    expect(byHash.status).toBe(403);
    expect((await gql(t.url, UNTRUSTED, {}, { key: clientKey })).status).toBe(200);
    expect((await gql(t.url, UNTRUSTED, {}, { key: t.adminKey })).status).toBe(200);
  });

  it('still serves the explorer\'s page to a browser', async () => {
    const page = await fetch(`${t.url}/graphql`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('accepts a trusted document sent in full', async () => {
    const { source } = manifestEntry(generated.manifest, 'PetList');
    const response = await gql(t.url, source, variables());
    expect(response.status).toBe(200);
    expect(response.data?.pets.nodes).toHaveLength(2);
  });

  it('answers an unknown documentId with 404 PERSISTED_DOCUMENT_NOT_FOUND and a malformed one with 400', async () => {
    const unknown = await post({ documentId: `sha256:${sha256('{ unknown }')}` }, t.adminKey);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).errors[0].extensions).toEqual({ code: 'PERSISTED_DOCUMENT_NOT_FOUND', status: 404 });
    const malformed = await post({ documentId: 'PetList' });
    expect(malformed.status).toBe(400);
    expect(codes({ body: null, status: 400, headers: {}, errors: ((await malformed.json()) as any).errors })).toEqual(['BAD_REQUEST']);
    const both = await post({ documentId: manifestEntry(generated.manifest, 'PetList').id, query: UNTRUSTED });
    expect(both.status).toBe(400);
  });

  it('lets anonymous callers run the corpus by id only, and key holders send it as they like', async () => {
    const names = readCorpus().flatMap(({ document }) =>
      document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION).map((d) => d.name!.value),
    );
    const tally = (statuses: number[]) => ({ refused: statuses.filter((s) => s === 403).length, passed: statuses.filter((s) => s !== 403 && s !== 404).length });
    // One at a time: the point is which documents pass, not how many at once.
    const send = async (body: (name: string) => object, key?: string) => {
      const statuses: number[] = [];
      for (const name of names) statuses.push((await post(body(name), key)).status);
      return tally(statuses);
    };
    // As written by hand or printed by Apollo Client: not the manifest's text, so not trusted.
    const asPrinted = (name: string) => ({ query: print(corpusOperation(name)) });
    const byId = await send((name) => ({ documentId: manifestEntry(generated.manifest, name).id }));
    const anonymous = await send(asPrinted);
    const withKey = await send(asPrinted, clientKey);
    expect(byId).toEqual({ refused: 0, passed: names.length });
    expect(anonymous).toEqual({ refused: names.length, passed: 0 });
    expect(withKey).toEqual({ refused: 0, passed: names.length });
    printFigure(
      `TRUSTED_DOCUMENTS_ONLY=anonymous, ${names.length} corpus operations: by documentId ${byId.passed} passed; ` +
        `as printed, anonymous ${anonymous.refused} refused 403; with a client key ${withKey.passed} passed`,
    );
  });

  it('serves Apollo Client with the codegen hashes over GET, one request per query, and refuses other documents', async () => {
    const sent: { method: string; url: string; body?: string }[] = [];
    const client = new ApolloClient({
      // GraphQL Code Generator puts each document's hash in __meta__.hash; the manifest gives the same.
      link: new PersistedQueryLink({ generateHash: (document) => (document as DocumentNode & { __meta__: { hash: string } }).__meta__.hash, useGETForHashedQueries: true }).concat(
        new HttpLink({
          uri: `${t.url}/graphql`,
          fetch: (input, init) => {
            sent.push({ method: init?.method ?? 'GET', url: String(input), body: init?.body as string | undefined });
            return fetch(input, init);
          },
        }),
      ),
      cache: new InMemoryCache(),
    });
    const { id, document } = manifestEntry(generated.manifest, 'PetList');
    const query = Object.assign(document, { __meta__: { hash: id } });
    const { data } = await client.query<any>({ query, variables: variables() });
    expect(data.pets.nodes.map((pet: any) => pet.name)).toEqual(['Rocky', 'Nibbles']);
    expect(sent.map(({ method, url, body }) => [method, new URL(url).searchParams.has('query'), body])).toEqual([['GET', false, undefined]]);

    const untrusted = Object.assign(tag(UNTRUSTED), { __meta__: { hash: sha256(UNTRUSTED) } });
    const error = await client.query({ query: untrusted }).catch((caught: unknown) => caught);
    // Refused before GraphQL, as an application/json 403: Apollo Client reports a ServerError carrying the body.
    expect(ServerError.is(error)).toBe(true);
    expect((error as ServerError).statusCode).toBe(403);
    expect(JSON.parse((error as ServerError).bodyText).errors[0].extensions).toEqual({ code: 'PERSISTED_DOCUMENT_REQUIRED', status: 403 });
  });
});
