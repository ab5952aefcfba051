import { type FragmentDefinitionNode, Kind, type SelectionSetNode } from 'graphql';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import { DEFAULT_PAGE_SIZE } from './bounds';

/**
 * What a field costs, weighed by what it asks of the database (docs/contract.md §5). The cost
 * limit then bounds database work, not just response size: an accepted query runs a bounded
 * number of statements, and few of them can scan a table.
 */
export const COST = {
  /** A field read from a row already fetched, and `__typename`. */
  FIELD: 1,
  /** A lookup through a per-request loader: batched with its peers into one statement. */
  LOOKUP: 2,
  /** A page of a connection: a statement of its own. */
  PAGE: 10,
  /** `totalCount`: a COUNT over every match, once per connection. */
  COUNT: 10,
  /** A substring filter (`nameContains`): an ILIKE that reads every row, for the page and again for the count. */
  SCAN: 20,
} as const;

/** What the estimators need besides the field: the document's fragments, to see through spreads. */
export interface CostContext {
  fragments: Record<string, FragmentDefinitionNode>;
}

/**
 * A connection: its page, its count when `totalCount` is asked for, a substring filter's scan for
 * each, and its selection once per item it may return (`first` times; docs/contract.md §6).
 * `totalCount` itself costs nothing inside the selection: it is charged here, once.
 */
function connectionCostOf(page: number, count: number): ComplexityEstimator {
  return ({ args, childComplexity, node, context }) => {
    const counts = selects(node.selectionSet, 'totalCount', (context as CostContext | undefined)?.fragments ?? {});
    const statements = counts ? 2 : 1;
    const filter = args.filter as { nameContains?: string | null } | null | undefined;
    const scan = filter?.nameContains ? COST.SCAN * statements : 0;
    const first = Math.max(0, Number(args.first ?? DEFAULT_PAGE_SIZE) || 0);
    return page + (counts ? count : 0) + scan + first * childComplexity;
  };
}

/** A root connection: a page and a count of its own. */
export const connectionCost = connectionCostOf(COST.PAGE, COST.COUNT);

/**
 * A connection under each item of another (a category's pets), loaded through a loader: its page
 * and its count are batched with the other items' into one statement each, so each costs a lookup.
 */
export const batchedConnectionCost = connectionCostOf(COST.LOOKUP, COST.LOOKUP);

/** Whether the selection asks for `name`, directly or through fragments. */
function selects(selectionSet: SelectionSetNode | undefined, name: string, fragments: Record<string, FragmentDefinitionNode>): boolean {
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name;
      if (selection.kind === Kind.INLINE_FRAGMENT) return visit(selection.selectionSet);
      if (seen.has(selection.name.value)) return false;
      seen.add(selection.name.value);
      return visit(fragments[selection.name.value]?.selectionSet);
    });
  return visit(selectionSet);
}
