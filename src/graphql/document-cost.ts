import {
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  GraphQLError,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  GraphQLSkipDirective,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLField,
  type GraphQLSchema,
  type GraphQLOutputType,
} from 'graphql';
import { DEFAULT_PAGE_SIZE } from '../common/bounds';
import { PAGE_FIELDS } from '../common/page-fields';
import { COST, substringCost } from '../common/query-cost';

/** A document's operation with its coerced variables: what costing reads. */
export interface CostedOperation {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

/** Response data as graphql-js returns it. */
type Data = Record<string, unknown>;

/**
 * An operation's cost for one set of the variables costing reads: its requested cost, worked out
 * once per catalogue size, and each response's actual cost. The walk's shapes (fields,
 * directives, leaves, page arguments) are kept with it, so a response is measured by reading its
 * data alone. `pets`, the catalogue's size, prices its substring filters (substringCost).
 */
export class OperationCost {
  private readonly walk: CostWalk;
  private requestedCost: { pets: number; cost: number } | undefined;

  constructor(costed: CostedOperation) {
    this.walk = new CostWalk(costed);
  }

  /** Before execution (docs/contract.md §5, src/common/query-cost.ts): every connection returns `first` items. */
  requested(pets: number): number {
    if (this.requestedCost?.pets !== pets) this.requestedCost = { pets, cost: this.walk.operation(undefined, pets) };
    return this.requestedCost.cost;
  }

  /** What the executed operation cost: connections as many items as they returned, skipped fields nothing. */
  actual(data: Data, pets: number): number {
    return this.walk.operation(data, pets);
  }
}

/** The cost of an operation before it runs, over a catalogue of `pets`. */
export function requestedCost(costed: CostedOperation, pets: number): number {
  return new OperationCost(costed).requested(pets);
}

/** A response key's fields: several when a document selects one key more than once, merged as execution merges them. */
interface KeyedFields {
  key: string;
  nodes: FieldNode[];
}

/**
 * A selection's cost in two parts. `response`: what the response carries, paid for every item of
 * a list. `statements`: the database work of reads batched through loaders (lookups, counts,
 * substring filters), one statement for all items of a page, so paid once however many items.
 */
interface Cost {
  response: number;
  statements: number;
}

/** A field holding objects, as a selection reads it: what it is is worked out once. */
interface ObjectField {
  key: string;
  field: GraphQLField<unknown, unknown>;
  nodes: FieldNode[];
  sets: readonly SelectionSetNode[];
  type: GraphQLObjectType;
  /** The field's own complexity (a lookup's, say). */
  own: number;
  kind: 'connection' | 'list' | 'object';
  /** A connection's arguments, read on first use. */
  page?: Page;
}

/** A connection's own cost and page size, and the statements its substring filter applies to. */
interface Page {
  own: Cost;
  first: number;
  substring?: { statements: number; indexed: boolean };
}

/** A selection on one type: its leaves' cost, and the fields that hold objects. */
interface Shape {
  leaves: number;
  objects: ObjectField[];
}

/**
 * One walk over the operation, with the response data alongside when measuring what it cost.
 * `data` undefined means "before execution": every list holds its connection's `first` items.
 * What it learns of the selections is kept for the next walk with the same variables.
 */
class CostWalk {
  private readonly shapes = new Map<readonly SelectionSetNode[], Map<GraphQLObjectType, Shape>>();
  private readonly rootSets: readonly SelectionSetNode[];
  /** The catalogue's size during the current walk: what a substring filter reads. */
  private pets = 0;

  constructor(private readonly costed: CostedOperation) {
    this.rootSets = [costed.operation.selectionSet];
  }

  operation(data: Data | undefined, pets: number): number {
    this.pets = pets;
    const { schema, operation } = this.costed;
    const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
    if (!root) return 0;
    // Each mutation runs a transaction of its own, whatever it answers.
    const writes = operation.operation === 'mutation' ? COST.MUTATION * this.fieldsOf(root, this.rootSets).length : 0;
    const cost: Cost = { response: 0, statements: 0 };
    this.selection(root, this.rootSets, data, 0, cost);
    return writes + cost.response + cost.statements;
  }

  /** Adds the fields of `sets` on `type` to `into`; `items` is the enclosing connection's `first`, for its lists. */
  private selection(type: GraphQLObjectType, sets: readonly SelectionSetNode[], data: Data | undefined, items: number, into: Cost): void {
    const { leaves, objects } = this.shapeOf(type, sets);
    into.response += leaves;
    for (const object of objects) {
      this.field(object, data === undefined ? undefined : data[object.key], data !== undefined, items, into);
    }
  }

  /**
   * What `sets` select on `type`, worked out once: the items of a list share their selection
   * sets, so their fields, directives and leaves are read once, not once an item.
   */
  private shapeOf(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): Shape {
    let byType = this.shapes.get(sets);
    if (!byType) this.shapes.set(sets, (byType = new Map()));
    let shape = byType.get(type);
    if (shape) return shape;
    const keysPerLeaf = new Map<string, number>();
    const objects: ObjectField[] = [];
    for (const { key, nodes } of this.fieldsOf(type, sets)) {
      const name = nodes[0].name.value;
      if (name.startsWith('__')) {
        if (name === '__typename') keysPerLeaf.set(name, (keysPerLeaf.get(name) ?? 0) + 1);
        continue; // introspection: answered from the schema, no database work
      }
      const field = type.getFields()[name];
      if (!field) continue; // validation has refused it already
      if (isLeafType(getNamedType(field.type))) {
        keysPerLeaf.set(name, (keysPerLeaf.get(name) ?? 0) + 1);
        continue;
      }
      objects.push({
        key,
        field,
        nodes,
        sets: nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : [])),
        type: getNamedType(field.type) as GraphQLObjectType,
        own: typeof field.extensions.complexity === 'number' ? field.extensions.complexity : 0,
        kind: isConnection(field) ? 'connection' : isListType(unwrapNonNull(field.type)) ? 'list' : 'object',
      });
    }
    let leaves = 0;
    for (const keys of keysPerLeaf.values()) leaves += COST.SCALAR + COST.REPEAT * (keys - 1);
    byType.set(type, (shape = { leaves, objects }));
    return shape;
  }

  /** Adds an object, a list of objects inside a connection, or a connection to `into`. */
  private field(object: ObjectField, value: unknown, executed: boolean, items: number, into: Cost): void {
    const { type, sets } = object;
    // A list's items are charged, not the field itself.
    if (object.kind !== 'list') into.statements += object.own;
    if (object.kind === 'connection') return this.connection(object, value, executed, into);
    if (object.kind === 'list') {
      // The items of a connection: an edge wraps its node and costs nothing of its own.
      const each = type.name.endsWith('Edge') ? 0 : COST.OBJECT;
      // One item's cost: each item's response is paid, the batched statements once for all.
      const item: Cost = { response: 0, statements: 0 };
      if (!executed) {
        this.selection(type, sets, undefined, 0, item);
        into.response += items * (each + item.response);
        into.statements += items > 0 ? item.statements : 0;
        return;
      }
      let statements = 0;
      for (const entry of Array.isArray(value) ? (value as (Data | null)[]) : []) {
        into.response += each;
        if (!entry) continue;
        item.response = 0;
        item.statements = 0;
        this.selection(type, sets, entry, 0, item);
        into.response += item.response;
        statements = Math.max(statements, item.statements);
      }
      into.statements += statements;
      return;
    }
    into.response += COST.OBJECT;
    if (!executed || (value !== null && value !== undefined)) this.selection(type, sets, value as Data | undefined, 0, into);
  }

  /** 2, `first` times an item, and its count and substring filters for each of its statements. */
  private connection(object: ObjectField, value: unknown, executed: boolean, into: Cost): void {
    const { own, first, substring } = (object.page ??= this.pageOf(object));
    into.response += own.response;
    into.statements += own.statements + (substring ? substring.statements * substringCost(this.pets, substring.indexed) : 0);
    if (!executed || (value !== null && value !== undefined)) this.selection(object.type, object.sets, value as Data | undefined, first, into);
  }

  /** A connection's own cost and page size, from its arguments and what it selects. */
  private pageOf({ field, nodes, type, sets }: ObjectField): Page {
    // Only the arguments costing reads, whose variables are the ones a kept walk holds.
    const args = requestValues(() => getArgumentValues({ ...field, args: field.args.filter((arg) => COSTED_ARGUMENTS.has(arg.name)) }, nodes[0], this.costed.variables));
    const selected = this.fieldsOf(type, sets).map(({ nodes: each }) => each[0].name.value);
    const counts = selected.some((name) => COUNT_FIELDS.has(name));
    // A count alone runs no page statement: its filter is read once, not twice.
    const pages = !counts || selected.some((name) => PAGE_FIELDS.has(name));
    const filter = args.filter as { nameContains?: string | null } | null | undefined;
    const substring = filter?.nameContains ? { statements: (counts ? 1 : 0) + (pages ? 1 : 0), indexed: TRIGRAM.test(filter.nameContains) } : undefined;
    const first = typeof args.first === 'number' ? Math.max(0, args.first) : DEFAULT_PAGE_SIZE;
    return { own: { response: COST.CONNECTION, statements: counts ? COST.COUNT : 0 }, first, substring };
  }

  /** The fields selected on `type`, through fragments, without those that @skip or @include leave out. */
  private fieldsOf(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): KeyedFields[] {
    const byKey = new Map<string, FieldNode[]>();
    const seenFragments = new Set<string>();
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (!this.included(selection)) continue;
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const nodes = byKey.get(key);
          if (nodes) nodes.push(selection);
          else byKey.set(key, [selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (this.applies(selection.typeCondition?.name.value, type)) visit(selection.selectionSet);
        } else {
          const fragment = this.costed.fragments[selection.name.value];
          if (!fragment || seenFragments.has(fragment.name.value)) continue;
          seenFragments.add(fragment.name.value);
          if (this.applies(fragment.typeCondition.name.value, type)) visit(fragment.selectionSet);
        }
      }
    };
    for (const set of sets) visit(set);
    return [...byKey].map(([key, nodes]) => ({ key, nodes }));
  }

  private included(node: FieldNode | { directives?: FieldNode['directives'] }): boolean {
    const { variables } = this.costed;
    const skip = requestValues(() => getDirectiveValues(GraphQLSkipDirective, node, variables));
    if (skip?.if === true) return false;
    const include = requestValues(() => getDirectiveValues(GraphQLIncludeDirective, node, variables));
    return include?.if !== false;
  }

  /** Whether a fragment's type condition holds for objects of `type` (the schema has no abstract types of its own). */
  private applies(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (condition === undefined || condition === type.name) return true;
    const named = this.costed.schema.getType(condition);
    return named !== undefined && named !== null && !isObjectType(named);
  }
}

/**
 * Arguments as graphql-js coerces them for execution. Its refusal (a null for `if: Boolean!`, say)
 * is a value the request gave: BAD_USER_INPUT, with graphql-js's message and location.
 */
function requestValues<T>(coerce: () => T): T {
  try {
    return coerce();
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    throw new GraphQLError(error.message, { nodes: error.nodes, originalError: error.originalError, extensions: { ...error.extensions, code: 'BAD_USER_INPUT' } });
  }
}

/** pg_trgm's trigrams come from words: a text with no 3 letters or digits in a row has none to search by. */
const TRIGRAM = /[\p{L}\p{N}]{3}/u;

/** A connection's arguments the cost reads (with the `if` of @skip and @include, the only inputs it reads). */
export const COSTED_ARGUMENTS: ReadonlySet<string> = new Set(['first', 'filter']);

/** A connection's fields that run its count (once, whichever are selected). */
const COUNT_FIELDS = new Set(['totalCount', 'totalCountPrecision']);

/** A cursor connection: a `first` argument and a `<Node>Connection` type. */
function isConnection(field: GraphQLField<unknown, unknown>): boolean {
  return field.args.some((arg) => arg.name === 'first') && getNamedType(field.type).name.endsWith('Connection');
}

function unwrapNonNull(type: GraphQLOutputType): GraphQLOutputType {
  return isNonNullType(type) ? type.ofType : type;
}
