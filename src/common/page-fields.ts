/** A connection's fields read from its page statement; the others (its count) need none. */
export const PAGE_FIELDS: ReadonlySet<string> = new Set(['nodes', 'edges', 'pageInfo']);
