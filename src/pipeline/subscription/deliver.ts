import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  Kind,
  type OperationDefinitionNode,
  print,
  visit,
} from 'graphql';
import type { Caller } from '../../auth/caller';
import { type Context, createLoaders, eventServices, type Services } from '../../context';

/** What an event is executed with for one subscription; subscriptions with one key share the result. */
export interface EventShape {
  document: DocumentNode;
  key: string;
}

/** A subscription that passed every check, waiting for its transport to iterate it. */
export interface Prepared {
  stream: AsyncIterable<unknown>;
  /** The root field: the label of its metrics. */
  operation: string;
  release: () => Promise<void>;
  shape: EventShape;
}

/**
 * Executes each event once per distinct selection on this instance, whatever the transport: every
 * subscriber of one event shares the event's loaders, and subscribers of one shape its result.
 * `active` counts the open subscriptions by root field (for the metrics).
 */
export class EventDelivery {
  readonly active = new Map<string, number>();
  private readonly eventLoaders = new WeakMap<object, Context['loaders']>();
  /** Each event's services: with read replicas, reading where the event's change is visible. */
  private readonly eventServices = new WeakMap<object, Services | Promise<Services>>();
  private readonly eventResults = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

  deliver(args: ExecutionArgs, subscription: Prepared): AsyncGenerator<ExecutionResult> {
    const { caller, services: appServices } = args.contextValue as Context;
    const events = subscription.stream[Symbol.asyncIterator]();
    const { active, eventLoaders, eventResults } = this;
    const servicesOf = (event: object): Services | Promise<Services> => {
      let services = this.eventServices.get(event);
      if (!services) {
        const position = appServices.live.hub.positionOf(event);
        services = position ? position.then((lsn) => eventServices(appServices, lsn)) : appServices;
        this.eventServices.set(event, services);
      }
      return services;
    };
    active.set(subscription.operation, (active.get(subscription.operation) ?? 0) + 1);
    let finished = false;
    const finish = async () => {
      if (finished) return;
      finished = true;
      active.set(subscription.operation, (active.get(subscription.operation) ?? 1) - 1);
      await subscription.release();
    };
    const ended = async (): Promise<IteratorReturnResult<undefined>> => {
      await events.return?.();
      await finish();
      return { done: true, value: undefined };
    };
    // Not an async generator function: return() must end a subscription waiting for its next event.
    const iterator: AsyncGenerator<ExecutionResult> = {
      [Symbol.asyncIterator]: () => iterator,
      async next() {
        const step = await events.next();
        if (step.done) return ended();
        const event = step.value as object;
        let results = eventResults.get(event);
        if (!results) eventResults.set(event, (results = new Map()));
        let result = results.get(subscription.shape.key);
        if (!result) {
          const services = servicesOf(event);
          const run = (services: Services) => {
            // Made on first use, then shared by every subscriber of the event: stock events read nothing.
            const contextValue: Context = {
              caller,
              services,
              get loaders() {
                let loaders = eventLoaders.get(event);
                if (!loaders) eventLoaders.set(event, (loaders = createLoaders(services)));
                return loaders;
              },
            };
            return execute({ ...args, document: subscription.shape.document, rootValue: event, contextValue });
          };
          result = services instanceof Promise ? services.then(run) : Promise.resolve(run(services));
          results.set(subscription.shape.key, result);
        }
        return { done: false, value: await result };
      },
      return: ended,
      async throw(error: unknown) {
        await ended();
        throw error;
      },
    };
    return iterator;
  }
}

/**
 * The document each event of a subscription is executed with, and the key of its result. The
 * root field's arguments only choose which events a subscriber gets (live/live.resolver.ts), so
 * they are dropped here; subscribers whose documents then agree, with the same values for the
 * variables still used and the same role, share one execution and one result per event.
 */
export function eventShape(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  caller: Caller,
): EventShape {
  const [root] = operation.selectionSet.selections;
  const stripped: OperationDefinitionNode =
    operation.selectionSet.selections.length === 1 && root.kind === Kind.FIELD
      ? { ...operation, selectionSet: { ...operation.selectionSet, selections: [{ ...root, arguments: [] }] } }
      : operation;
  const eventDocument: DocumentNode = {
    ...document,
    definitions: document.definitions.map((definition) => (definition === operation ? stripped : definition)),
  };
  const used = new Set<string>();
  visit(eventDocument, {
    OperationDefinition: (node) => (node === stripped ? undefined : false),
    VariableDefinition: () => false,
    Variable: (node) => void used.add(node.name.value),
  });
  const values = [...used].sort().map((name) => [name, variables[name]]);
  const role = caller.kind === 'key' ? caller.key.role : 'anonymous';
  return { document: eventDocument, key: `${role}\n${operation.name?.value ?? ''}\n${JSON.stringify(values)}\n${print(eventDocument)}` };
}

/** The subscription's root field: the label of its metrics. */
export function rootFieldOf(operation: OperationDefinitionNode | null | undefined): string {
  const [first] = operation?.selectionSet.selections ?? [];
  return first?.kind === 'Field' ? first.name.value : 'other';
}
