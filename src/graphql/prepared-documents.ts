import { createHash } from 'node:crypto';
import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import { type DocumentNode, type GraphQLError, type GraphQLSchema, Kind, parse, print, type SelectionNode, type SelectionSetNode, specifiedRules, type ValidationRule, validate, visit } from 'graphql';
import { LRUCache } from 'lru-cache';
import { documentCache, MAX_CACHED_DOCUMENT_CHARS, sourceLength } from './document-caches';
import { withoutConditionalSubscriptionRoots } from './subscription-root';

/** Documents validated here and handed to Apollo as sent; more than this (or more text) are validated again. */
const PREPARED_DOCUMENTS = 500;

/**
 * Apollo Server's document store (its `documentStore` option), and the documents graphql-js 16
 * cannot validate as sent though they are valid:
 * - a document repeating one selection hundreds of times, which runs out the budget of the rule
 *   that checks same-named fields can merge ("Validation aborted."); an exact repeat conflicts with
 *   nothing its first copy does not, so the document is validated without its repeats;
 * - a subscription with `@include`/`@skip` at its root, on which the one-root-field rule throws;
 *   it is validated without those directives (and refused as any subscription over HTTP is).
 * Such a document is validated here in that form and put in the store as sent: Apollo finds it
 * there already validated, and costs and executes it as sent. Apollo keys the store by a schema
 * prefix and the sha256 of the query text, as the trusted documents rely on too (pinned in
 * test/frontend/trusted-documents.cases.ts).
 */
export class PreparedDocuments {
  private readonly prepared = new LRUCache<string, DocumentNode>({ max: PREPARED_DOCUMENTS, maxSize: MAX_CACHED_DOCUMENT_CHARS, sizeCalculation: sourceLength });
  private readonly rules: readonly ValidationRule[];

  constructor(
    private readonly schema: GraphQLSchema,
    extraRules: readonly ValidationRule[],
    private readonly hideSuggestions: boolean,
    /** Every other document: Apollo's LRU, or the trusted documents in front of it (TrustedDocuments.documentStore). */
    private readonly others: KeyValueCache<DocumentNode> = documentCache(),
  ) {
    this.rules = [...specifiedRules, ...extraRules];
  }

  /** The store Apollo is given. */
  store(): KeyValueCache<DocumentNode> {
    // Almost always empty: then a request costs no look-up here.
    const known = (key: string) => (this.prepared.size === 0 ? undefined : this.prepared.get(key.slice(-64)));
    return {
      get: (key) => {
        const document = known(key);
        return document ? Promise.resolve(document) : this.others.get(key);
      },
      set: async (key, value, options) => (known(key) ? undefined : this.others.set(key, value, options)),
      delete: (key) => this.others.delete(key),
    };
  }

  /** Whether `source` may hold a subscription root Apollo's validation would throw on: a cheap look first. */
  static mayHaveConditionalSubscriptionRoot(source: string): boolean {
    return source.includes('subscription') && (source.includes('@include') || source.includes('@skip'));
  }

  /**
   * Prepares `source` when its validation needs one of the forms above: undefined when it needs
   * none (or does not parse: Apollo answers that), else the errors of its validation in that
   * form, empty when it is valid and now in the store.
   */
  prepare(source: string): readonly GraphQLError[] | undefined {
    let document: DocumentNode;
    try {
      document = parse(source);
    } catch {
      return undefined;
    }
    const checked = withoutConditionalSubscriptionRoots(withoutRepeatedSelections(document));
    if (checked === document) return undefined;
    const errors = validate(this.schema, checked, this.rules, { hideSuggestions: this.hideSuggestions });
    if (errors.length === 0) this.prepared.set(createHash('sha256').update(source).digest('hex'), document);
    return errors;
  }
}

/** The document with each selection set's exact repeats left out; the same object when it has none. */
export function withoutRepeatedSelections(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet: {
      leave(node: SelectionSetNode) {
        if (!mayRepeat(node.selections)) return undefined;
        const seen = new Set<string>();
        const selections = node.selections.filter((selection) => {
          const text = print(selection);
          if (seen.has(text)) return false;
          seen.add(text);
          return true;
        });
        return selections.length === node.selections.length ? undefined : { ...node, selections };
      },
    },
  });
}

/** A cheap first look: selections that differ in response name, fragment or type cannot repeat. */
function mayRepeat(selections: readonly SelectionNode[]): boolean {
  if (selections.length < 2) return false;
  const keys = new Set<string>();
  for (const selection of selections) {
    const key =
      selection.kind === Kind.FIELD
        ? (selection.alias ?? selection.name).value
        : selection.kind === Kind.FRAGMENT_SPREAD
          ? `...${selection.name.value}`
          : `... on ${selection.typeCondition?.name.value ?? ''}`;
    if (keys.has(key)) return true;
    keys.add(key);
  }
  return false;
}
