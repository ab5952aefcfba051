import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import {
  type DocumentNode,
  type GraphQLSchema,
  Kind,
  NoSchemaIntrospectionCustomRule,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  validate,
} from 'graphql';
import type { TrustedDocumentsManifest } from '../config';
import { checkOperationLimits } from './query-limits.plugin';
import { sampleVariables } from './sample-variables';

/** One document of the manifest, parsed and validated at start-up. */
export interface TrustedDocument {
  /** The hex sha256 of `source`. */
  hash: string;
  source: string;
  document: DocumentNode;
}

export interface TrustedDocumentLimits {
  maxCost: number;
  introspection: boolean;
}

/** A manifest document that may not be served: start-up stops on it. */
export class TrustedDocumentError extends Error {
  constructor(file: string, trusted: { hash: string; source: string }, reason: string) {
    super(`TRUSTED_DOCUMENTS (${file}): document sha256:${trusted.hash} (${describe(trusted.source)}) ${reason}`);
    this.name = 'TrustedDocumentError';
  }
}

/**
 * The trusted documents of a persisted-documents manifest (docs/contract.md §8). Every document
 * is parsed, validated and checked against the depth and cost limits once, here; one that fails
 * stops start-up with a message naming it.
 */
export class TrustedDocuments {
  private constructor(private readonly byHash: ReadonlyMap<string, TrustedDocument>) {}

  static load(manifest: TrustedDocumentsManifest, schema: GraphQLSchema, limits: TrustedDocumentLimits): TrustedDocuments {
    const rules = limits.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
    const byHash = new Map<string, TrustedDocument>();
    for (const [hash, source] of manifest.documents) {
      const refuse = (reason: string) => new TrustedDocumentError(manifest.file, { hash, source }, reason);
      let document: DocumentNode;
      try {
        document = parse(source);
      } catch (error) {
        throw refuse(`does not parse: ${(error as Error).message}`);
      }
      const [invalid] = validate(schema, document, rules);
      if (invalid) throw refuse(`is not valid against the schema: ${invalid.message}`);
      for (const operation of operationsOf(document)) {
        try {
          // Refused here only when no catalogue would admit it: each request is priced at the catalogue's size then.
          checkOperationLimits(schema, document, operation, sampleVariables(schema, operation), { maxCost: limits.maxCost, pets: 0 });
        } catch (error) {
          throw refuse(`is over a limit: ${(error as Error).message}`);
        }
      }
      byHash.set(hash, { hash, source, document });
    }
    return new TrustedDocuments(byHash);
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The document whose hex sha256 is `hash`, if the manifest has it. */
  find(hash: string): TrustedDocument | undefined {
    return this.byHash.get(hash);
  }

  /**
   * Apollo Server's document store, answering a trusted document's parsed and validated
   * DocumentNode from memory and every other document from `others`. Apollo keys the store by
   * a schema prefix and the sha256 of the query text; a trusted document's manifest key is that
   * sha256, so Apollo neither parses nor validates it again.
   */
  documentStore(others: KeyValueCache<DocumentNode>): KeyValueCache<DocumentNode> {
    const trusted = (key: string) => this.byHash.get(key.slice(-64));
    return {
      get: async (key) => trusted(key)?.document ?? others.get(key),
      set: async (key, value, options) => (trusted(key) ? undefined : others.set(key, value, options)),
      delete: (key) => others.delete(key),
    };
  }
}

function operationsOf(document: DocumentNode): OperationDefinitionNode[] {
  return document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
}

/** "query PetList" for messages; the document's first words when it has no named operation. */
function describe(source: string): string {
  const named = /\b(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(source);
  return named ? `${named[1]} ${named[2]}` : source.replace(/\s+/g, ' ').slice(0, 40);
}
