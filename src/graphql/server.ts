import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import type { DocumentNode, GraphQLSchema, ValidationRule } from 'graphql';
import type { Config } from '../config';
import type { Context } from '../context';
import type { Logger } from '../logger';
import { APQ_TTL_SECONDS } from './apq-cache';
import { createErrorFormatter } from '../format-error';
import { cachePolicyHooks } from './cache-policy.plugin';
import { httpStatusHooks } from './http-status.plugin';
import { noIntrospection } from './no-introspection.rule';
import { queryLimitsHooks } from './query-limits.plugin';
import { readRoutingHooks } from './read-routing.plugin';
import { requestHooksPlugin } from './request-hooks';
import { tracingPlugins } from '../telemetry';
import { subscriptionRefusalHooks } from './subscription-refusal.plugin';
import { textInputHooks } from './text-input.plugin';

/** Where persisted documents live (document-caches.ts bounds the in-memory ones); Apollo's in-memory defaults for what is not given. */
export interface PersistedDocumentStores {
  /** Automatic persisted queries: Redis, shared by instances (apq-cache.ts), or this process's bounded cache. */
  apqCache?: KeyValueCache<string>;
  /** Parsed and validated documents: prepared and trusted ones pinned (PreparedDocuments.store). */
  documentStore?: KeyValueCache<DocumentNode>;
}

/** Validation rules beside graphql-js's own: the ones a document prepared outside Apollo is held to as well. */
export function extraValidationRules(config: Pick<Config, 'introspection'>): ValidationRule[] {
  return config.introspection ? [] : [noIntrospection];
}

export async function startGraphQLServer(
  schema: GraphQLSchema,
  config: Pick<Config, 'introspection' | 'maxQueryCost' | 'responseCache' | 'responseCacheMaxAgeSeconds'>,
  logger: Logger,
  /** How many pets there are now: substring filters are priced by it (query-limits.plugin.ts). */
  catalogueSize: () => number,
  { apqCache, documentStore }: PersistedDocumentStores = {},
  /** The response cache's plugin (response-cache.plugin.ts), unless RESPONSE_CACHE is off. */
  responseCache?: ApolloServerPlugin<Context>,
): Promise<ApolloServer<Context>> {
  const server = new ApolloServer<Context>({
    // Executed by graphql-js, Apollo's own executor: the one path every answer takes.
    schema,
    // Apollo's automatic persisted queries (docs/contract.md §8); without a cache, in this process's memory.
    persistedQueries: { ttl: APQ_TTL_SECONDS, ...(apqCache ? { cache: apqCache } : {}) },
    ...(documentStore ? { documentStore } : {}),
    // Apollo's rule would name its own option; ours names GRAPHQL_INTROSPECTION.
    introspection: true,
    validationRules: extraValidationRules(config),
    hideSchemaDetailsFromClientErrors: !config.introspection,
    allowBatchedHttpRequests: false,
    // A request carrying X-API-Key cannot be a simple cross-site form post.
    csrfPrevention: { requestHeaders: ['x-api-key', 'x-apollo-operation-name', 'apollo-require-preflight'] },
    maxRecursiveSelections: true,
    includeStacktraceInErrorResponses: false,
    // main.ts owns the signals: it stops HTTP, then GraphQL, then the database.
    stopOnTerminationSignals: false,
    formatError: createErrorFormatter(logger),
    logger,
    plugins: [
      // Cache hints and traces would wrap every field's resolver; the gateway reads the hints from
      // the operation alone (cache/cache-control.ts) and reports to no Apollo Studio graph.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      // The gateway's own hooks, one listener for them all: each stage of a request costs one call.
      requestHooksPlugin([
        subscriptionRefusalHooks(),
        queryLimitsHooks(schema, config.maxQueryCost, catalogueSize),
        textInputHooks(),
        httpStatusHooks(),
        // Without the response cache, nothing purges a shared cache: the catalogue is revalidated.
        cachePolicyHooks(schema, config.responseCache ? config.responseCacheMaxAgeSeconds : 0),
        readRoutingHooks(),
      ]),
      // After the gateway's hooks have priced and admitted the operation, before it runs.
      ...(responseCache ? [responseCache] : []),
      // After the query limits': the operation span reads the cost they report. None unless tracing.
      ...tracingPlugins(),
      // A browser at /graphql gets the explorer's page before admission (pipeline/http.ts), never from Apollo.
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await server.start();
  return server;
}
