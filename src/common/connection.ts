import { ClassType, Field, Int, ObjectType } from 'type-graphql';
import { encodeCursor } from './cursor';
import type { Page } from './page';

@ObjectType({ description: 'Where a page ends, and whether another follows.' })
export class PageInfo {
  @Field(() => Boolean, { description: 'True when more items follow this page.' })
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: 'The cursor of the last item; pass it as `after` for the next page.' })
  endCursor!: string | null;
}

/** The fields shared by every connection; `totalCount` runs its query only when asked for. */
export interface ConnectionValue<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: PageInfo;
  countTotal: () => Promise<number>;
}

/** A cursor connection type for `Node`, named `<Node>Connection` with `<Node>Edge` edges. */
export function Connection<T extends object>(Node: ClassType<T>, noun: string, plural = `${noun}s`) {
  @ObjectType(`${Node.name}Edge`, { description: `One ${noun} in a page, with its cursor.` })
  class Edge {
    @Field(() => String, { description: `The cursor of this ${noun}.` })
    cursor!: string;

    @Field(() => Node, { description: `The ${noun}.` })
    node!: T;
  }

  @ObjectType()
  abstract class ConnectionType implements ConnectionValue<T> {
    @Field(() => [Edge], { description: `The ${plural} of this page, each with its cursor.` })
    edges!: Edge[];

    @Field(() => [Node], { description: `The ${plural} of this page (the edges' nodes, without cursors).` })
    nodes!: T[];

    @Field(() => PageInfo, { description: 'Where this page ends.' })
    pageInfo!: PageInfo;

    countTotal!: () => Promise<number>;

    // Charged once by the connection (graphql/document-cost.ts), not once per item.
    @Field(() => Int, { description: `How many ${plural} match, across all pages.` })
    totalCount(): Promise<number> {
      return this.countTotal();
    }
  }
  return ConnectionType;
}

/** A page as a connection; cursors carry each node's id (`idOf` for nodes keyed otherwise). */
export function toConnection<T>(
  page: Page<T>,
  countTotal: () => Promise<number>,
  idOf: (node: T) => string = (node) => (node as { id: string }).id,
): ConnectionValue<T> {
  const edges = page.rows.map((node) => ({ cursor: encodeCursor(idOf(node)), node }));
  return {
    edges,
    nodes: page.rows,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.at(-1)?.cursor ?? null },
    countTotal,
  };
}
