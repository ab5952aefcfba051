import { createSourceEventStream, type DocumentNode, type ExecutionArgs, getOperationAST, type GraphQLError, type GraphQLSchema, Kind, parse } from 'graphql';
import type { Caller } from '../../auth/caller';
import { subscriptionCapOf } from '../../auth/plans';
import { inTrace, type Trace } from '../../common/trace';
import { type Context, type Services, createContext } from '../../context';
import { ApiError, type ErrorCode } from '../../errors';
import type { Admitter } from '../../limits/admit';
import type { Decision } from '../../limits/limiter';
import { tooManySubscriptions } from '../../refusals';
import { MAX_NESTING, nestsDeeperThan, tooDeeplyNested } from '../../graphql/nesting-limit';
import { decideDocument, restrictedToTrusted } from '../../graphql/persisted-documents';
import { checkOperationLimits } from '../../graphql/query-limits.plugin';
import type { TrustedDocuments } from '../../graphql/trusted-documents';
import type { TrustedDocumentsOnly } from '../../config';
import { conditionalRootField } from '../../graphql/subscription-root';
import { eventShape, type Prepared, rootFieldOf } from './deliver';

/** What a subscriber sends: the graphql-ws `subscribe` payload, or an SSE request's params. */
export interface SubscriptionRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/** Who subscribes, and what its transport does when the subscriber reads too slowly. */
export interface Subscriber {
  caller: Caller;
  identity: string;
  /** Unique per subscription of this instance: the id of its slot. */
  slotId: string;
  /** Given the subscription's root field (the label of its metrics). */
  backlogOf?: (operation: string) => Context['backlog'];
  /** The limiter's word once the subscription is counted (an HTTP transport's rate-limit headers). */
  counted?: (decision: Decision) => void;
  /** The subscription operation's trace, when it is traced: its slot's and its count's Redis calls are children. */
  trace?: Trace;
}

export interface SubscriptionSteps {
  schema: GraphQLSchema;
  services: Services;
  admitter: Admitter<Caller>;
  maxQueryCost: number;
  /** The validation of HTTP requests (PreparedDocuments.validate): the same rules, the same errors. */
  validate: (document: DocumentNode) => readonly GraphQLError[];
  /** The document policy of HTTP requests (TRUSTED_DOCUMENTS_ONLY), held over subscriptions too. */
  trusted?: { documents?: TrustedDocuments; only: TrustedDocumentsOnly };
}

export function refusal(code: ErrorCode, message: string): ApiError[] {
  return [new ApiError(code, message)];
}

/**
 * Everything a subscription must pass before it starts, over any transport (docs/contract.md §9):
 * a caller restricted to trusted documents sending one the manifest lacks refused first (403
 * PERSISTED_DOCUMENT_REQUIRED, as over HTTP); parsed, validated and held to the depth and cost limits as an HTTP request is; one of the
 * caller's slots taken (the slot first: a refused subscribe consumes nothing of the windows); then
 * counted once in the caller's windows. Refusals come back as errors; the args and the prepared
 * stream when it may start.
 */
export async function prepareSubscription(
  steps: SubscriptionSteps,
  subscriber: Subscriber,
  request: SubscriptionRequest,
): Promise<{ args: ExecutionArgs; prepared: Prepared } | ApiError[]> {
  const { schema, services } = steps;
  if (steps.trusted && restrictedToTrusted(steps.trusted.only, subscriber.caller)) {
    try {
      decideDocument({ query: request.query }, steps.trusted.documents, true);
    } catch (error) {
      if (error instanceof ApiError) return [error];
      throw error;
    }
  }
  if (nestsDeeperThan(request.query, MAX_NESTING)) return [tooDeeplyNested()];
  let document;
  try {
    document = parse(request.query);
  } catch (error) {
    return refusal('GRAPHQL_PARSE_FAILED', (error as Error).message);
  }
  for (const definition of document.definitions) {
    const conditional = definition.kind === Kind.OPERATION_DEFINITION ? conditionalRootField(document, definition) : undefined;
    if (conditional) return refusal('GRAPHQL_VALIDATION_FAILED', conditional);
  }
  const invalid = steps.validate(document);
  if (invalid.length > 0) return refusal('GRAPHQL_VALIDATION_FAILED', invalid.map((error) => error.message).join('; '));
  const operation = getOperationAST(document, request.operationName);
  if (!operation) return refusal('OPERATION_RESOLUTION_FAILURE', 'Name the operation to run: the document has several, or none');
  if (operation.operation !== 'subscription') {
    return refusal('BAD_REQUEST', `Only subscriptions are served here; send a ${operation.operation} to POST /graphql`);
  }
  const variableValues = request.variables ?? {};
  try {
    checkOperationLimits(schema, document, operation, variableValues, { maxCost: steps.maxQueryCost, pets: services.database.catalogueSize.current() });
  } catch (error) {
    if (error instanceof ApiError) return [error];
    throw error;
  }

  const { caller, identity, slotId, trace } = subscriber;
  const cap = subscriptionCapOf(caller);
  if (!(await inTrace(trace, () => services.live.slots.acquire(identity, slotId, cap)))) {
    return [tooManySubscriptions(cap)];
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await inTrace(trace, () => services.live.slots.release(identity, slotId));
  };
  try {
    const counted = await steps.admitter.admitSubscribe(caller, identity, trace);
    if (counted.decision) subscriber.counted?.(counted.decision);
    if (counted.refusal) {
      await release();
      return [counted.refusal];
    }
    const contextValue = createContext(caller, services, undefined, trace);
    contextValue.backlog = subscriber.backlogOf?.(rootFieldOf(operation));
    const args: ExecutionArgs = { schema, document, variableValues, operationName: request.operationName, contextValue };
    const stream = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in stream)) {
      await release();
      return (stream.errors ?? []).map((error) => (error.originalError instanceof ApiError ? error.originalError : (error as ApiError)));
    }
    return { args, prepared: { stream, operation: rootFieldOf(operation), release, shape: eventShape(document, operation, variableValues, caller) } };
  } catch (error) {
    await release();
    throw error;
  }
}
