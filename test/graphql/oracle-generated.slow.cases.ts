import { printFigure } from '../helpers/figures';
import { DOCUMENTS_PER_OPERATION, GENERATED, SENDS, useOracle } from './oracle';

/**
 * The oracle (oracle.ts) over the documents generated from the schema, which oracle.cases.ts
 * leaves out of `npm test`: thousands of answers compared, one request at a time.
 */
const oracle = useOracle();

it(`answers the ${GENERATED} generated documents as graphql-js does, over POST and GET, every time`, async () => {
  const generated = oracle.generated();
  const { mismatches, compared, variableSets, outageRetries, ms } = await oracle.checkAll(generated);
  printFigure(`oracle: ${generated.length} generated operations of ${DOCUMENTS_PER_OPERATION} documents, ${variableSets} sets of variables, ${compared} answers compared, ${mismatches.length} mismatches, ${outageRetries} sends or references made again after a database timeout, ${ms} ms`);
  // The first few, whole: each names its document, variables, method and send.
  expect(mismatches.slice(0, 3)).toEqual([]);
  expect(compared).toBe(variableSets * SENDS);
}, 300_000);
