import { printFigure } from '../helpers/figures';
import { PREFLIGHTED, SENDS, useOracle } from './oracle';

/**
 * The oracle (oracle.ts) over the findings it was written for and the front end's queries;
 * oracle-generated.slow.cases.ts holds the generated documents to it.
 */
const oracle = useOracle();

it("answers the front end's queries and every finding as graphql-js does, over POST and GET, every time", async () => {
  const [findings, corpus] = [oracle.findings(), oracle.corpus()];
  const { mismatches, compared, variableSets, outageRetries, ms } = await oracle.checkAll([...findings, ...corpus]);
  printFigure(`oracle: ${findings.length} findings and ${corpus.length} of the front end's operations, ${variableSets} sets of variables, ${compared} answers compared, ${mismatches.length} mismatches, ${outageRetries} sends or references made again after a database timeout, ${ms} ms`);
  // The first few, whole: each names its document, variables, method and send.
  expect(mismatches.slice(0, 3)).toEqual([]);
  expect(compared).toBe(variableSets * SENDS);
}, 300_000);

describe('a 304 against the 200 it stands for', () => {
  /** A GET: its status, ETag and body; with `tag`, sent as If-None-Match. */
  const get = async (path: string, tag?: string) => {
    const response = await fetch(`${oracle.t.url}${path}`, { headers: { ...PREFLIGHTED, 'X-API-Key': oracle.key, ...(tag && { 'If-None-Match': tag }) } });
    return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
  };
  const graphqlGet = (query: string, variables?: Record<string, unknown>) => `/graphql?${new URLSearchParams({ query, ...(variables && { variables: JSON.stringify(variables) }) })}`;

  it.each([
    ['REST', () => `/pets/${oracle.petIds[0]}`, () => `/pets/${oracle.petIds[0]}?`],
    ['GraphQL GET', () => graphqlGet('query($id: ID!) { pet(id: $id) { id name } }', { id: oracle.petIds[0] }), () => graphqlGet('query($id: ID!) { pet(id: $id) { id name } }', { id: `0${oracle.petIds[0]}` })],
  ])('%s: the 304 carries the ETag of the 200, which equal bodies share', async (_name, path, samePath) => {
    const first = await get(path());
    expect(first.status).toBe(200);
    const revalidated = await get(path(), first.etag ?? '');
    expect(revalidated).toEqual({ status: 304, etag: first.etag, body: '' });
    // What the 304 stands for: a fresh 200 of the same bytes and the same tag.
    expect(await get(path())).toEqual(first);
    // Another request whose answer is the same bytes: the same tag, and a 304 for the first's tag.
    const same = await get(samePath());
    expect(same).toEqual(first);
    expect(await get(samePath(), first.etag ?? '')).toEqual({ status: 304, etag: first.etag, body: '' });
  });
});
