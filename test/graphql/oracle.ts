import {
  type DocumentNode,
  execute,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  validate,
  visit,
} from 'graphql';
import pino from 'pino';
import type { Caller } from '../../src/auth/caller';
import { createContext } from '../../src/context';
import { ApiError } from '../../src/errors';
import { formatGraphQLError } from '../../src/format-error';
import { buildGatewaySchema } from '../../src/graphql/schema';
import { checkOperationLimits } from '../../src/graphql/query-limits.plugin';
import { extraValidationRules } from '../../src/graphql/server';
import { isStorableText } from '../../src/graphql/text-input.plugin';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, setStock } from '../helpers/builders';
import { generateDocuments, type OracleDocument } from './oracle-documents';
import { frontEndQueries, sentQueries, truthTable } from './oracle-corpus';
import type { Collected } from './sent-documents';

/**
 * The oracle: every answer the gateway sends over HTTP (POST and GET, each document and set of
 * variables sent three times) holds byte for byte against graphql-js's own `validate` and
 * `execute`, run directly on the same schema and data with a fresh context, its errors through
 * the gateway's one formatter. Only `extensions` (the cost report, which the direct run has not)
 * are compared apart: equal on every send of one request. A mismatch names its document.
 *
 * How a client is told of graphql-js's refusals, as Apollo Server does it: a document that fails
 * validation is GRAPHQL_VALIDATION_FAILED; an error about a value the request gave rather than
 * about a field (a variable's value, a directive's argument) is BAD_USER_INPUT and the answer has
 * no `data`: the gateway refuses such a request before anything runs.
 *
 * Shared by oracle.cases.ts (the findings and the front end's queries, in `npm test`) and
 * oracle-generated.slow.cases.ts (the generated documents, in `npm run test:slow`).
 */
export const GENERATED = 520;
/** Generated documents an operation holds: GENERATED of them make 65 operations. */
export const DOCUMENTS_PER_OPERATION = 8;
export const SENDS = 3;
/** One operation at a time: the embedded database's one connection serves the gateway and the reference alike. */
const IN_FLIGHT = 1;
export const PREFLIGHTED = { 'Apollo-Require-Preflight': 'true' };
const silent = pino({ level: 'silent' });

/** graphql-js's error through the gateway's formatter, with the code Apollo gives it when it has none. */
function formatted(error: GraphQLError, code?: string, located = true) {
  const { message, nodes, source, positions, path, originalError, extensions } = error;
  const coded = code && extensions.code === undefined ? new GraphQLError(message, { nodes, source, positions, path: located ? path : undefined, originalError: originalError ?? error, extensions: { ...extensions, code } }) : error;
  return formatGraphQLError(coded, silent, { ...coded.toJSON(), extensions: { ...coded.extensions, code: coded.extensions.code ?? 'INTERNAL_SERVER_ERROR' } }, false);
}

interface Sent {
  method: 'POST' | 'GET';
  status: number;
  body: string;
}

interface Mismatch {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  method: string;
  send: number;
  expected: string;
  got: string;
}

/** What a run of the oracle over some operations found. */
export interface Checked {
  mismatches: Mismatch[];
  /** Answers compared: each set of variables, sent SENDS times. */
  compared: number;
  /** Sets of variables over the operations' truth tables. */
  variableSets: number;
  /** How many sends or references were made again after a database timeout. */
  outageRetries: number;
  ms: number;
}

export interface Oracle {
  /** The app and its data (set once the file's hooks ran). */
  readonly t: TestApp;
  readonly petIds: string[];
  /** An ENTERPRISE client key: its quota and database time hold every request of the run. */
  readonly key: string;
  /** Each finding the oracle was written for, by name. */
  findings(): OracleDocument[];
  /** The front end's own queries. */
  corpus(): OracleDocument[];
  /** The GENERATED documents, in operations of DOCUMENTS_PER_OPERATION, always the same (from a seed). */
  generated(): OracleDocument[];
  /** Every other query document the suite sends, with the sets of variables made for each (replayed). */
  replayed(): Replayed;
  /** Sends each operation over its truth table and holds every answer against graphql-js's. */
  checkAll(operations: OracleDocument[]): Promise<Checked>;
}

/** The suite's other query documents (sent-documents.ts) as the oracle sends them, and what was left out. */
export interface Replayed {
  collected: Collected;
  /** Each with its sets of variables, the truth table of its Boolean ones already taken. */
  documents: OracleDocument[];
  /** Sets of variables the gateway's own limits refuse before graphql-js runs, and the documents left with none. */
  overLimits: { sets: number; documents: number };
}

/** Registers the calling file's hooks: an app with three pets and a key, and graphql-js on the same schema. */
export function useOracle(): Oracle {
  let t: TestApp;
  let schema: GraphQLSchema;
  let petIds: string[];
  let key: string;
  let caller: Caller;

  beforeAll(async () => {
    t = await startTestApp({}, { limitRequests: false, limitInFlight: false });
    schema = await buildGatewaySchema();
    const dogs = await createCategory(t, 'Dogs', 'Loyal');
    const cats = await createCategory(t, 'Cats');
    petIds = [await createPet(t, dogs, 'Rex'), await createPet(t, dogs, 'Fido', 'SOLD'), await createPet(t, cats, 'Tom', 'PENDING')];
    await setStock(t, petIds[0], 3);
    ({ key } = await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 1_000_000, requestsPerDay: 100_000_000 }));
    caller = { kind: 'key', address: '127.0.0.1', key: (await t.app.services.apiKeys.authenticate(key))! };
  });
  afterAll(() => t.close());

  /** The reference: graphql-js on the same schema and data, its result written as Apollo writes one. */
  async function reference(document: DocumentNode, variables: Record<string, unknown>): Promise<{ errors?: unknown[]; data?: unknown }> {
    const invalid = validate(schema, document, [...specifiedRules, ...extraValidationRules(t.config)]);
    if (invalid.length) return { errors: invalid.map((error) => formatted(error, 'GRAPHQL_VALIDATION_FAILED')) };
    const result = (await execute({ schema, document, variableValues: variables, contextValue: createContext(caller, t.app.services) })) as ExecutionResult;
    const refusals = result.errors?.filter((error) => error.path === undefined || error.nodes?.[0]?.kind !== Kind.FIELD);
    if (refusals?.length) return { errors: refusals.map((error) => formatted(error, 'BAD_USER_INPUT', false)) };
    return { ...(result.errors && { errors: result.errors.map((error) => formatted(error)) }), data: result.data };
  }

  /**
   * A database that did not answer in time (the embedded one on a loaded machine) is an outage, not
   * an answer of either path: the reference and the request are made again, at most twice, and
   * counted; an answer that differs otherwise is never retried.
   */
  const OUTAGE = '"code":"SERVICE_UNAVAILABLE"';
  const MAX_OUTAGE_RETRIES = 2;
  let outageRetries = 0;
  async function apartFromOutages<T>(made: () => Promise<T>, text: (value: T) => string): Promise<T> {
    let value = await made();
    for (let retry = 0; retry < MAX_OUTAGE_RETRIES && text(value).includes(OUTAGE); retry += 1) {
      outageRetries += 1;
      value = await made();
    }
    return value;
  }

  async function send(method: 'POST' | 'GET', query: string, variables: Record<string, unknown>): Promise<Sent> {
    return apartFromOutages(() => sendOnce(method, query, variables), ({ body }) => body);
  }

  async function sendOnce(method: 'POST' | 'GET', query: string, variables: Record<string, unknown>): Promise<Sent> {
    const response =
      method === 'POST'
        ? await fetch(`${t.url}/graphql`, { method, headers: { 'Content-Type': 'application/json', 'X-API-Key': key }, body: JSON.stringify({ query, variables }) })
        : await fetch(`${t.url}/graphql?${new URLSearchParams({ query, variables: JSON.stringify(variables) })}`, { headers: { ...PREFLIGHTED, 'X-API-Key': key } });
    return { method, status: response.status, body: await response.text() };
  }

  /** One document over its truth table: the mismatches found, and how many requests were compared. */
  async function check(document: OracleDocument): Promise<{ mismatches: Mismatch[]; compared: number }> {
    const parsed = parse(document.query);
    const mismatches: Mismatch[] = [];
    let compared = 0;
    for (const variables of truthTable(document.booleans, document.variableSets)) {
      const expected = await apartFromOutages(() => reference(parsed, variables), JSON.stringify);
      const sent: Sent[] = [];
      // POST, GET, POST: a repeat is where a cached or compiled path would answer. A mutation
      // goes by POST only (GET refuses it with 405 before anything else).
      const methods = document.query.startsWith('mutation') ? (['POST'] as const) : (['POST', 'GET'] as const);
      for (let n = 0; n < SENDS; n += 1) sent.push(await send(methods[n % methods.length], document.query, variables));
      const firstExtensions = JSON.stringify(JSON.parse(sent[0].body).extensions);
      sent.forEach((answer, n) => {
        compared += 1;
        const { extensions } = JSON.parse(answer.body) as { extensions?: unknown };
        // The JSON text; Apollo ends it with a newline, the gateway's own refusals do not.
        const text = JSON.stringify({ ...expected, extensions });
        const sameExtensions = JSON.stringify(extensions) === firstExtensions;
        if (answer.body.replace(/\n$/, '') !== text || answer.status >= 500 || answer.status !== sent[0].status || !sameExtensions) {
          mismatches.push({ name: document.name, query: document.query, variables, method: answer.method, send: n, expected: `${text} (the first send: ${sent[0].status})`, got: `${answer.status} ${answer.body}` });
        }
      });
    }
    return { mismatches, compared };
  }

  /** The documents `IN_FLIGHT` at a time, over one gateway. */
  async function checkAll(documents: OracleDocument[]) {
    const mismatches: Mismatch[] = [];
    let compared = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < documents.length) {
          const result = await check(documents[next++]);
          mismatches.push(...result.mismatches);
          compared += result.compared;
        }
      }),
    );
    return { mismatches, compared };
  }

  /** Each finding the oracle was written for, by name. */
  const findings = (): OracleDocument[] => {
    const [rex, fido] = petIds;
    const one = (name: string, query: string, variableSets: Record<string, unknown>[] = [{}], booleans: string[] = []) => ({ name, query, variableSets, booleans });
    return [
      one(
        'a fragment spread twice under @include and @skip keeps its fields whenever either spread is kept',
        'query Pet($id: ID!, $a: Boolean!, $b: Boolean!) { pet(id: $id) { name ...Stock @include(if: $a) ...Stock @skip(if: $b) } } fragment Stock on Pet { stock: inventory { quantity } }',
        [{ id: rex }],
        ['a', 'b'],
      ),
      one('the same, the fragment its only selection', `query R1($a: Boolean!, $b: Boolean!) { pet(id: "${rex}") { ...F @include(if: $a) ...F @skip(if: $b) } } fragment F on Pet { id name }`, [{}], ['a', 'b']),
      one(
        'the same fragment under an included and an excluded alias',
        `query($a: Boolean!) { kept: pet(id: "${rex}") @include(if: $a) { ...F } dropped: pet(id: "${fido}") @skip(if: $a) { ...F } } fragment F on Pet { id name }`,
        [{}],
        ['a'],
      ),
      one('an ID variable with leading zeros is parsed by the scalar', 'query R2($id: ID!) { pet(id: $id) { id name } }', [{ id: `0${rex}` }, { id: `00${rex}` }, { id: Number(rex) }]),
      one('an ID variable with leading zeros, on category and inventoryItem', 'query($id: ID!) { category(id: $id) { id name } inventoryItem(petId: $id) { petId quantity } }', [{ id: '01' }, { id: '001' }]),
      one('an order by a zero-led id', 'query($id: ID!) { order(id: $id) { id } }', [{ id: '01' }]),
      one('keys in the order of the selection', `{ pet(id: "${rex}") { id status category { id } } }`),
      one('keys in the order of the selection, fragments merged', `{ pet(id: "${rex}") { ...on Pet { status } id ... { category { name } status } name } }`),
      one('a null for a Boolean variable with a default, used where Boolean! is needed', `query($a: Boolean = true) { pet(id: "${rex}") { id name @include(if: $a) } }`, [{ a: null }, {}, { a: false }]),
      one('first: null', 'query($first: Int) { pets(first: $first) { totalCount } }', [{ first: null }, { first: 0 }, { first: 101 }, { first: 'x' }]),
      one('first: null as a literal', '{ pets(first: null) { totalCount } }'),
      one('a cursor that does not decode, only totalCount selected', 'query($after: String) { pets(after: $after) { totalCount } }', [{ after: 'not a cursor' }, { after: '' }]),
      one('a cursor that does not decode, with nodes', 'query($after: String) { pets(after: $after) { nodes { id } } }', [{ after: 'not a cursor' }]),
      one('an error inside a non-null field nulls its parent', `{ category(id: "1") { id pets(first: 0) { totalCount } } pet(id: "${rex}") { name } }`),
      one('a field the caller may not read, beside ones it may', '{ apiKeys(first: 1) { totalCount } pets(first: 1) { nodes { name } } }'),
      one('an enum as a literal and as a variable, good and bad', 'query($s: PetStatus) { a: pets(filter: { status: SOLD }) { nodes { name status } } b: pets(filter: { status: $s }) { nodes { name } } }', [{ s: 'PENDING' }, { s: 'LOST' }, { s: null }]),
      one('an enum literal that is not one', '{ pets(filter: { status: LOST }) { totalCount } }'),
      one('an ID literal that is not an int64', '{ pet(id: "abc") { id } }'),
      one('bad ID variables', 'query($id: ID!) { pet(id: $id) { id } }', [{ id: 'abc' }, { id: null }, { id: -1 }, { id: 1.5 }, {}, { id: ['1'] }]),
      one('a DateTime variable, good and bad (refused before anything is written)', 'mutation($d: DateTime) { placeOrder(input: { petId: "1", quantity: 1, shipDate: $d }) { id } }', [{ d: 'tomorrow' }, { d: 12 }]),
      one('a DateTime literal that is not one', 'mutation { placeOrder(input: { petId: "1", quantity: 1, shipDate: "tomorrow" }) { id } }'),
      one('nested lists', '{ categories(first: 2) { nodes { name pets(first: 3) { nodes { name inventory { quantity pet { id } } } } } } }'),
    ];
  };

  const corpus = (): OracleDocument[] => frontEndQueries(schema);

  /**
   * Every other query document the suite sends (its test sources' literals and the guides'
   * examples, sent-documents.ts), each with values made from its variables' definitions
   * (oracle-variables.ts), over the whole truth table of its Boolean ones. A set of variables the
   * gateway's own limits refuse before graphql-js runs anything (depth, cost, text PostgreSQL cannot
   * store: test/graphql/query-cost.cases.ts and text-input.cases.ts hold those refusals) is counted
   * and left out: graphql-js alone has no such limits to answer with.
   */
  const replayed = (): Replayed => {
    const { collected, queries } = sentQueries(schema, petIds[0]);
    const overLimits = { sets: 0, documents: 0 };
    const documents: OracleDocument[] = [];
    for (const { sent, document, operation, rows } of queries) {
      // The limits are checked on a document that passed validation, as the gateway does.
      const admitted = sent.valid ? rows.filter((variables) => !refusedByLimits(document, operation, variables)) : rows;
      overLimits.sets += rows.length - admitted.length;
      if (admitted.length) documents.push({ name: `${sent.source}: ${sent.where}`, query: sent.query, variableSets: admitted, booleans: [] });
      else overLimits.documents += 1;
    }
    return { collected, documents, overLimits };
  };

  /** Whether the gateway's own limits refuse the operation with these variables before it runs. */
  const refusedByLimits = (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): boolean => {
    let unstorable = false;
    visit(document, {
      StringValue(node) {
        unstorable ||= !isStorableText(node.value);
      },
    });
    if (unstorable) return true;
    try {
      checkOperationLimits(schema, document, operation, variables, { maxCost: t.config.maxQueryCost, pets: t.app.services.database.catalogueSize.current() });
      return false;
    } catch (error) {
      // A variable graphql-js refuses is its own answer, compared like any other.
      return error instanceof ApiError && error.code === 'QUERY_TOO_COMPLEX';
    }
  };

  return {
    get t() {
      return t;
    },
    get petIds() {
      return petIds;
    },
    get key() {
      return key;
    },
    findings,
    corpus,
    generated: () => generateDocuments(GENERATED, 20_240_601, petIds, DOCUMENTS_PER_OPERATION),
    replayed,
    async checkAll(operations) {
      const started = Date.now();
      const retriesBefore = outageRetries;
      const { mismatches, compared } = await checkAll(operations);
      const variableSets = operations.reduce((sum, { booleans, variableSets: sets }) => sum + sets.length * 2 ** booleans.length, 0);
      return { mismatches, compared, variableSets, outageRetries: outageRetries - retriesBefore, ms: Date.now() - started };
    },
  };
}
