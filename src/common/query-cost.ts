/**
 * What a GraphQL document costs (docs/contract.md §5), on the lines of Shopify's calculated cost:
 * what the response carries, plus what the database has to do for it. The default limit admits a
 * list view of 100 items with every scalar, its joined relations, `pageInfo` and `totalCount`,
 * and refuses documents that multiply statements or rows.
 *
 * Resolvers declare a field's database work beyond its object with TypeGraphQL's `complexity`
 * option (a number, added to the field's own cost); src/graphql/document-cost.ts does the sums.
 */
export const COST = {
  /** A scalar or enum field, and `__typename`: read from a row already fetched. */
  SCALAR: 0,
  /** Each further response key for one scalar field (`a1: name a2: name …`): it multiplies the response. */
  REPEAT: 1,
  /** An object, and a connection's `pageInfo`. A relation joined into its parent's statement costs just this. */
  OBJECT: 1,
  /** A connection: 2, plus `first` times its item's cost. */
  CONNECTION: 2,
  /**
   * A read by a statement of its own: a lookup through a loader. The loader batches it with its
   * peers, so under a list it is one statement for the page: paid once, not per item.
   */
  LOOKUP: 1,
  /** `totalCount`: a COUNT over every match; once per connection, once per page under a list. */
  COUNT: 10,
  /**
   * A substring filter (`nameContains`), for each statement it applies to (the page and the
   * count), on a catalogue of SCAN_MEASURED_AT pets: the page of a text few names hold walks the
   * primary key to its end (test/domain/filter-plans.cases.ts shows the plans and times each against
   * the list view). Priced by the catalogue's real size (substringCost).
   */
  SUBSTRING: 340,
  /** The same for a text with no trigram (no 3 letters or digits in a row): no index serves it, each statement scans. */
  UNINDEXED_SUBSTRING: 650,
  /** The number of pets SUBSTRING and UNINDEXED_SUBSTRING were measured at. */
  SCAN_MEASURED_AT: 100_000,
  /** A mutation (each root field of one): a transaction of its own, as Shopify charges 10. */
  MUTATION: 10,
} as const;

/**
 * One statement of a substring filter over a catalogue of `pets`: the price measured at
 * SCAN_MEASURED_AT pets, in proportion, and never less than a statement of its own (LOOKUP). A
 * text with no trigram is the scan it is at any size; a text the trigram index serves grows with
 * the catalogue up to its measured price and stays there (docs/contract.md §3 serves it at a
 * million pets).
 */
export function substringCost(pets: number, indexed: boolean): number {
  const measured = indexed ? COST.SUBSTRING : COST.UNINDEXED_SUBSTRING;
  const proportional = Math.max(COST.LOOKUP, Math.ceil((measured * pets) / COST.SCAN_MEASURED_AT));
  return indexed ? Math.min(measured, proportional) : proportional;
}
