import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGatewaySchema, printGatewaySchema } from '../graphql/schema';

/** Writes schema.graphql at the repository root (`npm run schema`). */
async function main(): Promise<void> {
  const path = join(__dirname, '..', '..', '..', 'schema.graphql');
  writeFileSync(path, printGatewaySchema(await buildGatewaySchema()));
  console.log(`wrote ${path}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
