import { type GraphQLSchema, lexicographicSortSchema } from 'graphql';
import { GraphQLDateTime } from 'graphql-scalars';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { buildSchema } from 'type-graphql';
import { RateLimitResolver } from '../limits/rate-limit.resolver';
import { ApiKeyResolver } from '../auth/api-key.resolver';
import { authChecker } from '../auth/auth-checker';
import { rateLimitDirective, stabilityDirective } from './directives';
import { CategoryResolver } from '../pets/category.resolver';
import { PetResolver } from '../pets/pet.resolver';
import { InventoryResolver } from '../store/inventory.resolver';
import { OrderResolver } from '../store/order.resolver';

const RESOLVERS = [PetResolver, CategoryResolver, InventoryResolver, OrderResolver, ApiKeyResolver, RateLimitResolver] as const;

let built: Promise<GraphQLSchema> | undefined;

/** The gateway's schema, built once per process from the resolvers. */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: RESOLVERS,
    scalarsMap: [{ type: Date, scalar: GraphQLDateTime }],
    // TypeGraphQL 2 validates nothing unless asked; optional fields opt out one by one.
    validate: { skipMissingProperties: false, forbidUnknownValues: false },
    authChecker,
    directives: [stabilityDirective, rateLimitDirective],
  }).then(describeRootTypes);
  return built;
}

/** TypeGraphQL cannot describe the root types; every type of this schema has a description. */
function describeRootTypes(schema: GraphQLSchema): GraphQLSchema {
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  if (query) query.description = 'Reads: the catalogue, stock, orders, keys and your own quota.';
  if (mutation) mutation.description = 'Writes: catalogue and stock changes, orders and key management.';
  return schema;
}

const GENERATED_HEADER = `# Generated from the resolvers by \`npm run schema\`; do not edit.
# A test fails when this file differs from the schema the server builds.

`;

/** The text of schema.graphql: sorted, with the directives the resolvers attach. */
export function printGatewaySchema(schema: GraphQLSchema): string {
  return GENERATED_HEADER + printSchemaWithDirectives(lexicographicSortSchema(schema)) + '\n';
}
