import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import { type DocumentNode, GraphQLError, type GraphQLSchema, Kind, parse, print, type SelectionNode, type SelectionSetNode, specifiedRules, type ValidationRule, validate, visit } from 'graphql';
import { LRUCache } from 'lru-cache';
import { documentCache, documentHash, MAX_CACHED_DOCUMENT_CHARS, sourceLength } from './document-caches';
import { withoutConditionalSubscriptionRoots } from './subscription-root';

/** Documents validated here and handed to Apollo as sent; more than this (or more text) are validated again. */
const PREPARED_DOCUMENTS = 500;
/** Documents known to need no preparation: more than this (or more text) are looked at again. */
const PLAIN_DOCUMENTS = 5_000;
const PLAIN_DOCUMENT_CHARS = 1 << 20;
/**
 * Texts up to this long are known by themselves, so that the usual request (a short document
 * seen before) hashes nothing here (Apollo hashes it for its own store); longer ones by hash.
 */
const KNOWN_BY_TEXT_CHARS = 2_000;
/**
 * Selections an operation may request once its fragments are expanded: Apollo's own bound
 * (`maxRecursiveSelections: true`), which its validation applies and a prepared document skips.
 */
export const MAX_RECURSIVE_SELECTIONS = 10_000_000;

/**
 * Apollo Server's document store (its `documentStore` option), and the documents graphql-js 16
 * cannot validate as sent though they are valid:
 * - a document repeating one selection hundreds of times, which runs out the budget of the rule
 *   that checks same-named fields can merge ("Validation aborted."); an exact repeat conflicts with
 *   nothing its first copy does not, so the document is validated without its repeats;
 * - a subscription with `@include`/`@skip` at its root, on which the one-root-field rule throws;
 *   it is validated without those directives (and refused as any subscription over HTTP is).
 * Such a document is validated here in that form, held to Apollo's bound on recursive selections
 * as sent, and put in the store as sent: Apollo finds it there already validated, and costs and
 * executes it as sent. One invalid in that form gets graphql-js's errors for it as sent, as it
 * would without this store (a mistake repeated is an error per repeat). Whether a document needs this is decided from its syntax before Apollo
 * runs, never from what Apollo answers (a document may quote any message in a string). Apollo
 * keys the store by a schema prefix and the sha256 of the query text, as the trusted documents
 * rely on too (pinned in test/frontend/trusted-documents.cases.ts).
 */
export class PreparedDocuments {
  private readonly prepared = new LRUCache<string, DocumentNode>({ max: PREPARED_DOCUMENTS, maxSize: MAX_CACHED_DOCUMENT_CHARS, sizeCalculation: sourceLength });
  // lru-cache refuses a size of 0: the empty text counts as 1.
  private readonly plain = new LRUCache<string, true>({ max: PLAIN_DOCUMENTS, maxSize: PLAIN_DOCUMENT_CHARS, sizeCalculation: (_, key) => Math.max(1, key.length) });
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

  /**
   * Prepares `source`, before Apollo sees it, when its validation needs one of the forms above:
   * undefined when it needs none (or does not parse: Apollo answers that), else the errors of its
   * validation in that form, empty when it is valid and in the store. Each text is looked at once.
   */
  prepare(source: string): readonly GraphQLError[] | undefined {
    const byText = source.length <= KNOWN_BY_TEXT_CHARS;
    const hash = byText ? undefined : documentHash(source);
    const plainKey = hash ?? source;
    if (this.plain.has(plainKey)) return undefined;
    const key = hash ?? documentHash(source);
    if (this.prepared.has(key)) return [];
    let document: DocumentNode;
    try {
      document = parse(source);
    } catch {
      return void this.plain.set(plainKey, true);
    }
    const checked = withoutConditionalSubscriptionRoots(withoutRepeatedSelections(document));
    if (checked === document) return void this.plain.set(plainKey, true);
    const errors = this.validate(document, checked);
    if (errors.length === 0) this.prepared.set(key, document);
    return errors;
  }

  /**
   * The validation of every transport: HTTP's (Apollo's, given the same rules and suggestion
   * hiding, and this for the documents prepared here), and the subscriptions' over WebSocket and
   * SSE. graphql-js's rules and the gateway's, no "Did you mean" without introspection, and
   * Apollo's bound on recursive selections of the document as sent; `checked` is the form
   * validated (repeats left out, which graphql-js cannot validate as sent).
   */
  validate(document: DocumentNode, checked = withoutRepeatedSelections(document)): GraphQLError[] {
    const options = { hideSuggestions: this.hideSuggestions };
    const errors = [...validate(this.schema, checked, this.rules, options)];
    if (errors.length === 0) return tooManyRecursiveSelections(document, MAX_RECURSIVE_SELECTIONS);
    // Invalid without its repeats is invalid as sent: graphql-js's errors for the document as sent
    // then, one for each repeat of a mistake too, as Apollo alone would answer; the form checked
    // only where graphql-js would throw on it as sent.
    if (checked !== document && withoutConditionalSubscriptionRoots(document) === document) return [...validate(this.schema, document, this.rules, options)];
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

/**
 * The operations of `document` that request more than `limit` selections once fragments are
 * expanded (as Apollo's recursive-selections rule counts them), each as a validation error.
 */
export function tooManyRecursiveSelections(document: DocumentNode, limit: number): GraphQLError[] {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  const expanded = new Map<string, number>();
  const countOf = (set: SelectionSetNode, seen: Set<string>): number => {
    let count = 0;
    for (const selection of set.selections) {
      count += 1;
      if (selection.kind === Kind.FRAGMENT_SPREAD) count += fragmentCount(selection.name.value, seen);
      else if (selection.selectionSet) count += countOf(selection.selectionSet, seen);
      if (count > limit) return count;
    }
    return count;
  };
  const fragmentCount = (name: string, seen: Set<string>): number => {
    const known = expanded.get(name);
    if (known !== undefined) return known;
    const set = fragments.get(name);
    // A cycle, or a fragment that is not there: validation refuses those.
    if (!set || seen.has(name)) return 0;
    seen.add(name);
    const count = countOf(set, seen);
    seen.delete(name);
    expanded.set(name, count);
    return count;
  };
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION || countOf(definition.selectionSet, new Set()) <= limit) return [];
    const name = definition.name ? `Operation "${definition.name.value}"` : 'Anonymous operation';
    return [new GraphQLError(`${name} recursively requests too many selections.`)];
  });
}
