import { request as httpRequest } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { buildGatewaySchema } from '../../src/graphql/schema';
import { formatLsn, parseLsn } from '../../src/sql/lsn';
import { frontEndQueries, sentQueries, truthTable } from '../graphql/oracle-corpus';
import { generateDocuments } from '../graphql/oracle-documents';
import { DATABASE_BOUND, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import { readsServed, replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

/**
 * The replica's oracle: once the replica has replayed the primary's position, every query an
 * instance answers from it is the answer the primary gives, byte for byte: status, JSON text (key
 * order and errors included) and, for a GET, the ETag. The documents and variables are the
 * graphql-js oracle's (test/graphql/oracle.cases.ts): the front end's queries, the generated
 * ones and every query the suite sends, over the whole truth table of their Boolean variables,
 * each over POST and GET. One instance reads from the replica, the other has none and reads from
 * the primary; the response cache is off on both, so every answer is computed.
 */
const GENERATED = 520;
const SEED = 20_240_601;
/** A name only the writes after the seed give: the answers compared must show it. */
const RENAMED = 'Rex, renamed after the seed';
const ADDED = 'Felix, added after the seed';
const PREFLIGHTED = { 'Apollo-Require-Preflight': 'true' };

interface Request {
  name: string;
  query: string;
  variables: Record<string, unknown>;
}

interface Answer {
  status: number;
  etag: string | null;
  body: string;
}

withReplication("read replicas: the replica's oracle, its answers against the primary's once caught up", () => {
  let r: Replication;
  /** Reads from the replica. */
  let onReplica: TestApp;
  /** The same deployment without DATABASE_READ_URLS: every read on the primary. */
  let onPrimary: TestApp;
  let schema: GraphQLSchema;
  let petIds: string[];
  /** A client key: its quotas hold every request of the run. */
  let key: string;

  beforeAll(async () => {
    r = await startReplication(DATABASE_BOUND);
    [onReplica] = r.instances;
    const a = onReplica;
    // The seed.
    const dogs = await createCategory(a, 'Dogs', 'Loyal');
    const cats = await createCategory(a, 'Cats');
    petIds = [await createPet(a, dogs, 'Rex'), await createPet(a, dogs, 'Fido', 'SOLD'), await createPet(a, cats, 'Tom', 'PENDING')];
    await setStock(a, petIds[0], 3);
    ({ key } = await createApiKey(a, { plan: 'ENTERPRISE', requestsPerMinute: 1_000_000, requestsPerDay: 100_000_000 }));
    // Catalogue writes after it, through the API: a rename, a restock, a new pet, and an order of the client's own.
    const renamed = await gql(a.url, 'mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', { id: petIds[0], name: RENAMED }, { key: a.adminKey });
    expect(renamed.data?.updatePet.name).toBe(RENAMED);
    await setStock(a, petIds[1], 7);
    petIds.push(await createPet(a, cats, ADDED, 'AVAILABLE'));
    const ordered = await placeOrder(a, key, petIds[0], 2);
    expect(ordered.data?.placeOrder.quantity).toBe(2);
    // Caught up: the replica, as the instance last polled it, has replayed the primary's position
    // past every write; the client's own last write (its order) included.
    const [{ lsn }] = (await r.db.dataSource.query('SELECT pg_current_wal_lsn()::text AS lsn')) as { lsn: string }[];
    expect(parseLsn(lsn)! >= parseLsn(ordered.headers['x-read-after'])!).toBe(true);
    onPrimary = await r.startInstance({ ...DATABASE_BOUND, DATABASE_READ_URLS: '' });
    await replicaAt(onReplica, formatLsn(parseLsn(lsn)!));
    // The catalogue's size prices substring filters and is kept a few seconds: both instances read it now, past the writes.
    await Promise.all([onReplica, onPrimary].map((instance) => instance.app.services.database.catalogueSize.refresh()));
    schema = await buildGatewaySchema();
  }, 120_000);

  afterAll(async () => {
    await r?.close();
  });

  /** Every request: the graphql-js oracle's documents over their sets of variables, in a fixed order. */
  function requests(): { requests: Request[]; documents: number; sources: Record<string, number> } {
    const sources: Record<string, number> = {};
    const all: Request[] = [];
    const add = (source: string, name: string, query: string, rows: Record<string, unknown>[]) => {
      sources[source] = (sources[source] ?? 0) + 1;
      for (const variables of rows) all.push({ name, query, variables });
    };
    for (const { name, query, variableSets, booleans } of frontEndQueries(schema)) add("the front end's queries", name, query, truthTable(booleans, variableSets));
    for (const { name, query, variableSets, booleans } of generateDocuments(GENERATED, SEED, petIds)) add(`${GENERATED} generated documents in operations of 8`, name, query, truthTable(booleans, variableSets));
    // The renamed pet is the one the suite's documents are given as an existing id.
    for (const { sent, rows } of sentQueries(schema, petIds[0]).queries) add('the queries the suite sends', `${sent.source}: ${sent.where}`, sent.query, rows);
    return { requests: all, documents: Object.values(sources).reduce((sum, each) => sum + each, 0), sources };
  }

  /**
   * One request on a connection of its own (node:http, no agent): a kept-alive socket that the
   * server closes as the client reuses it would be a reset of neither path.
   */
  function send(instance: TestApp, method: 'POST' | 'GET', { query, variables }: Request): Promise<Answer> {
    const body = method === 'POST' ? JSON.stringify({ query, variables }) : undefined;
    const path = method === 'POST' ? '/graphql' : `/graphql?${new URLSearchParams({ query, variables: JSON.stringify(variables) })}`;
    const headers = method === 'POST' ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body!)) } : PREFLIGHTED;
    return new Promise((resolve, reject) => {
      const sent = httpRequest(`${instance.url}${path}`, { method, agent: false, headers: { ...headers, 'X-API-Key': key } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, etag: response.headers.etag ?? null, body: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      });
      sent.on('error', reject);
      sent.end(body);
    });
  }

  it('answers every query document of the oracle from the replica as the primary does, byte for byte, over POST and GET', async () => {
    const started = Date.now();
    const { requests: all, documents, sources } = requests();
    const mismatches: { name: string; query: string; variables: Record<string, unknown>; method: string; replica: Answer; primary: Answer }[] = [];
    /**
     * Requests to the replica's instance by where their reads went, each counted alone, one at a
     * time. A refusal has none to count; one made beside the routing (Apollo runs the
     * didResolveOperation hooks together) may be counted or not, so only answers with data must be.
     */
    const servedBy = { replica: 0, primary: 0, none: 0 };
    /** Answers with data from the replica's instance whose reads were counted nowhere. */
    const unrouted: string[] = [];
    let compared = 0;
    /** GET answers whose ETags were compared. */
    let tagged = 0;
    const pastTheSeed = { renamed: 0, added: 0 };
    for (const request of all) {
      for (const method of ['POST', 'GET'] as const) {
        const before = await readsServed(onReplica);
        const replica = await send(onReplica, method, request);
        const after = await readsServed(onReplica);
        if (after.replica > before.replica) servedBy.replica += 1;
        else if (after.primary > before.primary) servedBy.primary += 1;
        else {
          servedBy.none += 1;
          if (replica.body.includes('"data":')) unrouted.push(`${method} ${request.name} ${JSON.stringify(request.variables)}: ${replica.status} ${replica.body.slice(0, 200)}`);
        }
        const primary = await send(onPrimary, method, request);
        compared += 1;
        if (replica.etag !== null) tagged += 1;
        if (replica.body.includes(RENAMED)) pastTheSeed.renamed += 1;
        if (replica.body.includes(ADDED)) pastTheSeed.added += 1;
        if (replica.status !== primary.status || replica.body !== primary.body || replica.etag !== primary.etag || replica.status >= 500) {
          mismatches.push({ name: request.name, query: request.query, variables: request.variables, method, replica, primary });
        }
      }
    }
    printFigure(
      `replica oracle: ${documents} documents (${Object.entries(sources).map(([source, count]) => `${count} of ${source}`).join(', ')}), ${all.length} document × variable-set pairs × 2 methods: ` +
        `${compared} answers compared (${tagged} with an ETag), ${mismatches.length} mismatches; on the replica's instance ${servedBy.replica} served by the replica, ${servedBy.primary} by the primary, ${servedBy.none} counted nowhere (refusals, of validation or of variables); ` +
        `${pastTheSeed.renamed} answers with the pet renamed after the seed, ${pastTheSeed.added} with the pet added after it; ${Date.now() - started} ms`,
    );
    // The first few, whole: each names its document, variables, method and both answers.
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(compared).toBe(all.length * 2);
    // Every read went to the replica, and what was written after the seed was among what was compared.
    expect(servedBy.primary).toBe(0);
    expect(unrouted).toEqual([]);
    expect(servedBy.replica).toBeGreaterThan(all.length);
    expect(tagged).toBeGreaterThan(0);
    expect(pastTheSeed.renamed).toBeGreaterThan(0);
    expect(pastTheSeed.added).toBeGreaterThan(0);
  }, 600_000);
});
