import {
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
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
import { COST } from '../common/query-cost';

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
 * The cost of an operation before it runs (docs/contract.md §5, src/common/query-cost.ts): every
 * connection returns `first` items.
 */
export function requestedCost(costed: CostedOperation): number {
  return new CostWalk(costed).operation(undefined);
}

/** What the executed operation cost: connections as many items as they returned, skipped fields nothing. */
export function actualCost(costed: CostedOperation, data: Data): number {
  return new CostWalk(costed).operation(data);
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

/** A selection on one type: its leaves' cost, and the fields that hold objects. */
interface Shape {
  leaves: number;
  objects: { key: string; field: GraphQLField<unknown, unknown>; nodes: FieldNode[]; sets: readonly SelectionSetNode[] }[];
}

const NOTHING: Cost = { response: 0, statements: 0 };
const plus = (a: Cost, b: Cost): Cost => ({ response: a.response + b.response, statements: a.statements + b.statements });
const total = (cost: Cost) => cost.response + cost.statements;

/**
 * One walk over the operation, with the response data alongside when measuring what it cost.
 * `data` undefined means "before execution": every list holds its connection's `first` items.
 */
class CostWalk {
  private readonly shapes = new Map<readonly SelectionSetNode[], Map<GraphQLObjectType, Shape>>();

  constructor(private readonly costed: CostedOperation) {}

  operation(data: Data | undefined): number {
    const { schema, operation } = this.costed;
    const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
    if (!root) return 0;
    // Each mutation runs a transaction of its own, whatever it answers.
    const writes = operation.operation === 'mutation' ? COST.MUTATION * this.fieldsOf(root, [operation.selectionSet]).length : 0;
    return writes + total(this.selection(root, [operation.selectionSet], data, 0));
  }

  /** The fields of `sets` on `type`; `items` is the enclosing connection's `first`, for its lists. */
  private selection(type: GraphQLObjectType, sets: readonly SelectionSetNode[], data: Data | undefined, items: number): Cost {
    const { leaves, objects } = this.shapeOf(type, sets);
    let cost: Cost = { response: leaves, statements: 0 };
    for (const { key, field, nodes, sets: inner } of objects) {
      cost = plus(cost, this.field(field, nodes, inner, data === undefined ? undefined : data[key], data !== undefined, items));
    }
    return cost;
  }

  /**
   * What `sets` select on `type`, worked out once a walk: the items of a list share their
   * selection sets, so their fields, directives and leaves are read once, not once an item.
   */
  private shapeOf(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): Shape {
    let byType = this.shapes.get(sets);
    if (!byType) this.shapes.set(sets, (byType = new Map()));
    let shape = byType.get(type);
    if (shape) return shape;
    const keysPerLeaf = new Map<string, number>();
    const objects: Shape['objects'] = [];
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
      objects.push({ key, field, nodes, sets: nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : [])) });
    }
    let leaves = 0;
    for (const keys of keysPerLeaf.values()) leaves += COST.SCALAR + COST.REPEAT * (keys - 1);
    byType.set(type, (shape = { leaves, objects }));
    return shape;
  }

  /** An object, a list of objects inside a connection, or a connection. */
  private field(
    field: GraphQLField<unknown, unknown>,
    nodes: FieldNode[],
    sets: readonly SelectionSetNode[],
    value: unknown,
    executed: boolean,
    items: number,
  ): Cost {
    const type = getNamedType(field.type) as GraphQLObjectType;
    const own = { response: 0, statements: typeof field.extensions.complexity === 'number' ? field.extensions.complexity : 0 };
    if (isConnection(field)) return plus(own, this.connection(field, type, nodes[0], sets, value, executed));
    if (isListType(unwrapNonNull(field.type))) {
      // The items of a connection: an edge wraps its node and costs nothing of its own.
      const each = type.name.endsWith('Edge') ? 0 : COST.OBJECT;
      if (!executed) return this.items(items, each, this.selection(type, sets, undefined, 0));
      const list = (Array.isArray(value) ? (value as (Data | null)[]) : []).map((item) => (item ? this.selection(type, sets, item, 0) : NOTHING));
      const response = list.reduce((sum, item) => sum + each + item.response, 0);
      return { response, statements: Math.max(0, ...list.map((item) => item.statements)) };
    }
    const object = executed && (value === null || value === undefined) ? NOTHING : this.selection(type, sets, value as Data | undefined, 0);
    return plus(plus(own, { response: COST.OBJECT, statements: 0 }), object);
  }

  /** `count` items: the response of each, the batched statements once. */
  private items(count: number, each: number, item: Cost): Cost {
    return { response: count * (each + item.response), statements: count > 0 ? item.statements : 0 };
  }

  /** 2, `first` times an item, and its count and substring filters for each of its statements. */
  private connection(
    field: GraphQLField<unknown, unknown>,
    type: GraphQLObjectType,
    node: FieldNode,
    sets: readonly SelectionSetNode[],
    value: unknown,
    executed: boolean,
  ): Cost {
    const args = getArgumentValues(field, node, this.costed.variables);
    const selected = this.fieldsOf(type, sets).map(({ nodes }) => nodes[0].name.value);
    const counts = selected.some((name) => COUNT_FIELDS.has(name));
    // A count alone runs no page statement: its filter is read once, not twice.
    const pages = !counts || selected.some((name) => PAGE_FIELDS.has(name));
    const filter = args.filter as { nameContains?: string | null } | null | undefined;
    const substring = filter?.nameContains ? substringCost(filter.nameContains) * ((counts ? 1 : 0) + (pages ? 1 : 0)) : 0;
    const first = typeof args.first === 'number' ? Math.max(0, args.first) : DEFAULT_PAGE_SIZE;
    const own = { response: COST.CONNECTION, statements: (counts ? COST.COUNT : 0) + substring };
    if (executed && (value === null || value === undefined)) return own;
    return plus(own, this.selection(type, sets, value as Data | undefined, first));
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
    const skip = getDirectiveValues(GraphQLSkipDirective, node, variables);
    if (skip?.if === true) return false;
    const include = getDirectiveValues(GraphQLIncludeDirective, node, variables);
    return include?.if !== false;
  }

  /** Whether a fragment's type condition holds for objects of `type` (the schema has no abstract types of its own). */
  private applies(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (condition === undefined || condition === type.name) return true;
    const named = this.costed.schema.getType(condition);
    return named !== undefined && named !== null && !isObjectType(named);
  }
}

/** pg_trgm's trigrams come from words: a text with no 3 letters or digits in a row has none to search by. */
const TRIGRAM = /[\p{L}\p{N}]{3}/u;
const substringCost = (text: string) => (TRIGRAM.test(text) ? COST.SUBSTRING : COST.UNINDEXED_SUBSTRING);

/** A connection's fields that run its count (once, whichever are selected). */
const COUNT_FIELDS = new Set(['totalCount', 'totalCountPrecision']);

/** A cursor connection: a `first` argument and a `<Node>Connection` type. */
function isConnection(field: GraphQLField<unknown, unknown>): boolean {
  return field.args.some((arg) => arg.name === 'first') && getNamedType(field.type).name.endsWith('Connection');
}

function unwrapNonNull(type: GraphQLOutputType): GraphQLOutputType {
  return isNonNullType(type) ? type.ofType : type;
}
