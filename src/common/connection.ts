import { ClassType, Directive, Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { encodeCursor } from './cursor';
import type { Page } from './page';
import { CATALOGUE_HINT } from '../common/cache-hints';

@Directive(CATALOGUE_HINT)
@ObjectType({ description: 'Where a page ends, and whether another follows.', simpleResolvers: true })
export class PageInfo {
  @Field(() => Boolean, { description: 'True when more items follow this page.' })
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: 'The cursor of the last item; pass it as `after` for the next page.' })
  endCursor!: string | null;
}

/** How far a count can be trusted, on the model of Shopify's count precision. */
export enum CountPrecision {
  EXACT = 'EXACT',
  AT_LEAST = 'AT_LEAST',
}

registerEnumType(CountPrecision, {
  name: 'CountPrecision',
  description: 'Whether `totalCount` is exact, or a lower bound.',
  valuesConfig: {
    EXACT: { description: 'Exactly this many match.' },
    AT_LEAST: { description: 'At least this many match: counting by a substring stops at 10,000.' },
  },
});

/** A count, exact or a lower bound. */
export interface Count {
  total: number;
  exact: boolean;
}

/** The fields shared by every connection; the count runs its query only when asked for, once. */
export interface ConnectionValue<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: PageInfo;
  count: () => Promise<Count>;
}

/** A cursor connection type for `Node`, named `<Node>Connection` with `<Node>Edge` edges. */
export function Connection<T extends object>(Node: ClassType<T>, noun: string, plural = `${noun}s`) {
  @Directive(CATALOGUE_HINT)
  @ObjectType(`${Node.name}Edge`, { description: `One ${noun} in a page, with its cursor.`, simpleResolvers: true })
  class Edge {
    @Field(() => String, { description: `The cursor of this ${noun}.` })
    cursor!: string;

    @Field(() => Node, { description: `The ${noun}.` })
    node!: T;
  }

  @ObjectType({ simpleResolvers: true })
  abstract class ConnectionType implements ConnectionValue<T> {
    @Field(() => [Edge], { description: `The ${plural} of this page, each with its cursor.` })
    edges!: Edge[];

    @Field(() => [Node], { description: `The ${plural} of this page (the edges' nodes, without cursors).` })
    nodes!: T[];

    @Field(() => PageInfo, { description: 'Where this page ends.' })
    pageInfo!: PageInfo;

    count!: () => Promise<Count>;

    // Both charged once by the connection (graphql/document-cost.ts), not once per item.
    @Field(() => Int, { description: `How many ${plural} match, across all pages (see totalCountPrecision).` })
    async totalCount(): Promise<number> {
      return (await this.count()).total;
    }

    @Field(() => CountPrecision, { description: 'EXACT, or AT_LEAST when totalCount is a lower bound (a substring filter matching over 10,000).' })
    async totalCountPrecision(): Promise<CountPrecision> {
      return (await this.count()).exact ? CountPrecision.EXACT : CountPrecision.AT_LEAST;
    }
  }
  return ConnectionType;
}

/** A page as a connection; cursors carry each node's id (`idOf` for nodes keyed otherwise). */
export function toConnection<T>(
  page: Page<T>,
  countTotal: () => Promise<number | Count>,
  idOf: (node: T) => string = (node) => (node as { id: string }).id,
): ConnectionValue<T> {
  const last = page.rows.at(-1);
  let edges: ConnectionValue<T>['edges'] | undefined;
  let counted: Promise<Count> | undefined;
  return {
    // Made when a document selects them: a page read through `nodes` encodes one cursor, not one an item.
    get edges() {
      return (edges ??= page.rows.map((node) => ({ cursor: encodeCursor(idOf(node)), node })));
    },
    nodes: page.rows,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: last === undefined ? null : encodeCursor(idOf(last)) },
    count: () => (counted ??= countTotal().then((count) => (typeof count === 'number' ? { total: count, exact: true } : count))),
  };
}
