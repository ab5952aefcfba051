import 'reflect-metadata';
import { makeEmbeddedTemplate } from '../db/make-embedded-template';

/**
 * `npm run embedded-template` (and `npm ci`, after installing): makes the migrated template a new
 * embedded database starts from, unless this PGlite and these migrations have one already.
 */
async function main(): Promise<void> {
  const started = Date.now();
  const { path, made } = await makeEmbeddedTemplate();
  console.log(made ? `Made the embedded database template in ${((Date.now() - started) / 1000).toFixed(1)} s: ${path}` : `The embedded database template is up to date: ${path}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
