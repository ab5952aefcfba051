/**
 * The bounds of what clients send and receive (docs/contract.md §3), each defined here once: the
 * entities, the GraphQL inputs, the REST parameters and the OpenAPI description import them.
 */

/** The longest name a pet, a category or an API key may have (after trimming). */
export const NAME_MAX = 100;
/** The longest category description (after trimming). */
export const DESCRIPTION_MAX = 500;

/** Items in one page of a list: GraphQL `first`, REST `limit`. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
/** How far REST `offset` may skip. */
export const MAX_REST_OFFSET = 1_000_000_000;

/** Units in one order, from 1. */
export const MAX_ORDER_QUANTITY = 1_000;
/** The stock count an admin may set, from 0. */
export const MAX_STOCK = 1_000_000;

/** A count that has to search rows (a substring filter) stops here: beyond it, "at least this many". */
export const COUNT_BOUND = 10_000;

/** The largest request body, and WebSocket message, accepted: 100 KiB (docs/contract.md §6). */
export const MAX_BODY_BYTES = 102_400;
