import { printFigure } from '../helpers/figures';
import { SENDS, useOracle } from './oracle';

/**
 * The oracle (oracle.ts) over every other query document the suite sends, and the examples of
 * the guides and the schema (sent-documents.ts), each over values made from its variables'
 * definitions: a path added to make answers faster is held on what the suite itself asks.
 */
const oracle = useOracle();

it('answers every other query document the suite sends, and the examples of the guides and the schema, as graphql-js does, over POST and GET, every time', async () => {
  const started = Date.now();
  const { collected, documents, overLimits } = oracle.replayed();
  const collecting = Date.now() - started;
  const { mismatches, compared, variableSets, outageRetries } = await oracle.checkAll(documents);
  const count = (sources: string[]) => [...new Set(sources)].map((source) => `${sources.filter((each) => each === source).length} from ${source}`).join(', ');
  const excluded = [...collected.excluded.values()].reduce((sum, { count: each }) => sum + each, 0);
  const queries = collected.documents;
  printFigure(
    `oracle, replayed: ${[...collected.found.values()].reduce((sum, each) => sum + each, 0)} distinct documents found (${[...collected.found].map(([source, each]) => `${each} in ${source}`).join(', ')}); ` +
      `${queries.length} queries to replay (${count(queries.map(({ source }) => source))}; ${queries.filter(({ valid }) => !valid).length} of them refused by validation), ${excluded} documents left out (below); ` +
      `${documents.length} documents, ${variableSets} sets of variables, ${SENDS} sends: ${compared} answers compared, ${mismatches.length} mismatches, ${outageRetries} sends or references made again after a database timeout, ` +
      `collected in ${collecting} ms, ${Date.now() - started} ms in all`,
  );
  printFigure(`  left out: ${overLimits.sets} sets of variables the gateway's own limits refuse before graphql-js runs anything (depth, cost, text it cannot store), all those of ${overLimits.documents} queries`);
  for (const [reason, { count: each, first }] of collected.excluded) printFigure(`  left out: ${each} documents, ${reason} (the first: ${first})`);
  expect(mismatches.slice(0, 3)).toEqual([]);
  expect(compared).toBe(variableSets * SENDS);
}, 300_000);
