/**
 * The `@cacheControl` hints the schema's types carry (directive in cache-control.ts). The
 * catalogue's answers may be kept this long (seconds); RESPONSE_CACHE_MAX_AGE_SECONDS may lower it.
 */
export const CATALOGUE_MAX_AGE_SECONDS = 60;
/** The hint of the catalogue's types: the same for every caller allowed to read them. */
export const CATALOGUE_HINT = `@cacheControl(maxAge: ${CATALOGUE_MAX_AGE_SECONDS})`;
/** The hint of the types answered per caller: their keys, orders and quota. */
export const PRIVATE_HINT = '@cacheControl(scope: PRIVATE)';
