/**
 * The embedded database's data directory that keeps its data in memory. Apart from embedded.ts,
 * so that naming it does not load PGlite.
 */
export const IN_MEMORY = 'memory://';
