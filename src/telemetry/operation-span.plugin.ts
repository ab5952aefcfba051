import type { ApolloServerPlugin } from '@apollo/server';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { carriedTrace } from './request-trace';

/** The one path Apollo serves: the HTTP span's route, and so its name (`POST /graphql`). */
const GRAPHQL_ROUTE = '/graphql';

/** What the query limits put in `extensions.cost` (docs/contract.md §6). */
interface ReportedCost {
  requested?: unknown;
  actual?: unknown;
}

/**
 * One span per GraphQL operation, a child of the request's HTTP span, named as OpenTelemetry's
 * GraphQL conventions name it (`query FirstPets`) and carrying the operation's type, name and
 * cost. The cost is read from the response, where the query limits put it: this plugin is listed
 * after theirs, so their willSendResponse has written it. No span per field: that would cost more
 * than the operation. Its parent is the trace the request's context carries (request-trace.ts); a
 * request left out by the sampler carries none, and gets no hooks at all.
 */
export function operationSpanPlugin(tracer: Tracer): ApolloServerPlugin {
  return {
    async requestDidStart({ contextValue, request }) {
      const parent = carriedTrace(contextValue)?.context;
      if (!parent) return;
      // The HTTP span named after its route, as a framework's instrumentation has it named (the
      // RPC metadata's route): set here, since the instrumentation reads that metadata from the
      // context active when the response closes, and none is then.
      const rpc = getRPCMetadata(parent);
      if (rpc?.type === RPCType.HTTP) {
        rpc.route = GRAPHQL_ROUTE;
        rpc.span.setAttribute('http.route', GRAPHQL_ROUTE);
        rpc.span.updateName(`${request.http?.method ?? 'POST'} ${GRAPHQL_ROUTE}`);
      }
      const span = tracer.startSpan('GraphQL Operation', undefined, parent);
      return {
        async didResolveOperation({ operation, operationName }) {
          if (!operation) return;
          span.setAttribute('graphql.operation.type', operation.operation);
          if (operationName) span.setAttribute('graphql.operation.name', operationName);
          span.updateName(operationName ? `${operation.operation} ${operationName}` : operation.operation);
        },
        async willSendResponse({ response, errors }) {
          const result = response.body.kind === 'single' ? response.body.singleResult : undefined;
          const cost = result?.extensions?.cost as ReportedCost | undefined;
          if (typeof cost?.requested === 'number') span.setAttribute('graphql.cost.requested', cost.requested);
          if (typeof cost?.actual === 'number') span.setAttribute('graphql.cost.actual', cost.actual);
          // The code only: a message can quote the client's document.
          if (errors?.length) {
            span.setAttribute('graphql.errors', errors.length);
            span.setStatus({ code: SpanStatusCode.ERROR, message: String(errors[0].extensions.code ?? 'INTERNAL_SERVER_ERROR') });
          }
          span.end();
        },
      };
    },
  };
}
