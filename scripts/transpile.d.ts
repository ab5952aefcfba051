/** The options of .swcrc. */
export function swcOptions(): Record<string, unknown>;
/** One file's JavaScript, with an inline source map. */
export function transpile(source: string, filename: string, options?: Record<string, unknown>): string;
/** src/ and ormconfig.ts into `outDir`, laid out as `tsc` lays them; returns how many files were written. */
export function transpileSources(outDir: string): number;
