import { assertValidSchema, type GraphQLSchema, lexicographicSortSchema, specifiedDirectives } from 'graphql';
import { GraphQLDateTime } from 'graphql-scalars';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { type NonEmptyArray, type PubSub, buildSchema, getMetadataStorage } from 'type-graphql';
import { RateLimitResolver } from '../auth/rate-limit.resolver';
import { ApiKeyResolver } from '../auth/api-key.resolver';
import { authChecker } from '../auth/auth-checker';
import { callResolversDirectly } from './direct-resolvers';
import { rateLimitDirective, stabilityDirective } from './directives';
import { LiveResolver, SubscriptionQuotaResolver } from '../live/live.resolver';
import { CategoryResolver } from '../pets/category.resolver';
import { PetResolver } from '../pets/pet.resolver';
import { InventoryResolver } from '../store/inventory.resolver';
import { OrderResolver } from '../store/order.resolver';
import { cacheControlDirective } from './cache-control';

const RESOLVERS = [
  PetResolver,
  CategoryResolver,
  InventoryResolver,
  OrderResolver,
  ApiKeyResolver,
  RateLimitResolver,
  LiveResolver,
  SubscriptionQuotaResolver,
] as const;

let built: Promise<GraphQLSchema> | undefined;

/** The gateway's schema, built once per process from the resolvers. */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  built ??= buildSchemaOf([...RESOLVERS]).then(describeRootTypes);
  return built;
}

/** How the gateway turns resolver classes into a schema: scalars, validation, auth and directives. */
export async function buildSchemaOf(resolvers: NonEmptyArray<Function>): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    resolvers,
    scalarsMap: [{ type: Date, scalar: GraphQLDateTime }],
    // TypeGraphQL 2 validates nothing unless asked; optional fields opt out one by one.
    validate: { skipMissingProperties: false, forbidUnknownValues: false },
    authChecker,
    // The list replaces graphql-js's default one: keep @include, @skip, @deprecated, @specifiedBy
    // and @oneOf beside our own (docs/contract.md §8).
    directives: [...specifiedDirectives, stabilityDirective, rateLimitDirective, cacheControlDirective],
    pubSub: NO_SHARED_PUBSUB,
    // TypeGraphQL checks a schema by running the whole introspection query over it: two thirds of
    // the build, in every process and test file. That query starts with graphql-js's validation,
    // run here alone; the rest of what it reads (default values) the schema.graphql test prints.
    skipCheck: true,
  });
  assertValidSchema(schema);
  refuseUncheckedSimpleFields();
  callResolversDirectly(schema, resolvers);
  return schema;
}

/**
 * The types read item by item (pets, categories, stock, orders, pages) are marked with
 * TypeGraphQL's `simpleResolvers`: their plain property fields resolve with graphql-js's default
 * resolver rather than a TypeGraphQL wrapper per field of every item. That option also drops a
 * field's auth check and middleware, so a type holding a field with either fails the build
 * instead of serving it unchecked. Fields with a resolver method keep their wrapper and checks.
 */
function refuseUncheckedSimpleFields(): void {
  for (const type of getMetadataStorage().objectTypes) {
    if (!type.simpleResolvers) continue;
    for (const field of type.fields ?? []) {
      if (field.roles || field.middlewares?.length) {
        throw new Error(`${type.name}.${field.name}: expected no @Authorized or middleware on a field of a type with simpleResolvers`);
      }
    }
  }
}

/**
 * TypeGraphQL wants one PubSub for the whole schema, but the schema is built once per process
 * and each app fans out through its own ChangeHub (several apps share a process in the tests).
 * Every @Subscription therefore names its own `subscribe`, and this one is never used.
 */
const NO_SHARED_PUBSUB: PubSub = {
  publish() {
    throw new Error('expected events to be published through the app\'s ChangeHub');
  },
  subscribe() {
    throw new Error('expected every @Subscription to name its own subscribe function');
  },
};

/** TypeGraphQL cannot describe the root types; every type of this schema has a description. */
function describeRootTypes(schema: GraphQLSchema): GraphQLSchema {
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  if (subscription) subscription.description = 'Experimental. Live updates over WebSocket (graphql-ws) at /graphql.';
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
