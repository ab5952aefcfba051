import { type DocumentNode, getNamedType, type GraphQLSchema, Kind, type OperationDefinitionNode, parse, print, typeFromAST } from 'graphql';
import { sampleVariables } from '../../src/graphql/sample-variables';
import { corpusDocument, corpusOperation } from '../frontend/corpus';
import type { OracleDocument } from './oracle-documents';
import { variableValues } from './oracle-variables';
import { type Collected, collectSentDocuments, type SentDocument } from './sent-documents';

/**
 * The documents the oracles send and the variables they send them with, shared by the oracle
 * against graphql-js (oracle.ts) and the one of a replica against its primary
 * (test/replicas/replica-oracle.cases.ts).
 */

/** Every assignment of `names` to true and false, over each of `sets`. */
export function truthTable(names: string[], sets: Record<string, unknown>[]): Record<string, unknown>[] {
  let rows = sets;
  for (const name of names) rows = rows.flatMap((row) => [{ ...row, [name]: false }, { ...row, [name]: true }]);
  return rows;
}

/**
 * The front end's own queries (test/frontend/documents): each with its required variables, over
 * every value of its Boolean ones. Not `rateLimit`'s: its answer is the quota that each request
 * spends, so no two answers are meant to be equal.
 */
export function frontEndQueries(schema: GraphQLSchema): OracleDocument[] {
  return corpusDocument()
    .definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'query')
    .filter((operation) => !print(corpusOperation(operation.name!.value)).includes('rateLimit'))
    .map((operation) => {
      const name = operation.name!.value;
      const booleans = (operation.variableDefinitions ?? [])
        .filter((definition) => getNamedType(typeFromAST(schema, definition.type))?.name === 'Boolean')
        .map((definition) => definition.variable.name.value);
      return { name: `the front end's ${name}`, query: print(corpusOperation(name)), variableSets: [sampleVariables(schema, operation)], booleans };
    });
}

export interface SentQuery {
  sent: SentDocument;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** Its sets of variables (oracle-variables.ts) over the whole truth table of its Boolean ones; one for a document validation refuses, which reads none. */
  rows: Record<string, unknown>[];
}

/** Every other query document the suite sends (sent-documents.ts), each with its sets of variables. */
export function sentQueries(schema: GraphQLSchema, existingId: string): { collected: Collected; queries: SentQuery[] } {
  const collected = collectSentDocuments(schema, existingId);
  const queries = collected.documents.map((sent) => {
    const document = parse(sent.query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
    const { variableSets, booleans } = variableValues(schema, operation, existingId);
    const rows = truthTable(booleans, variableSets);
    return { sent, document, operation, rows: sent.valid ? rows : rows.slice(0, 1) };
  });
  return { collected, queries };
}
